package js

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var (
	dates = []string{
		"2026-11-29T19:00:00.000Z", "2026-11-29t19:00:00z", "2026-11-29 19:00:00Z", "2026-02-30", "2026-02-30T00:00:00Z",
		"2026-11-29T19:00:00+0100", "2026-11-29T19:00:00+01:00", "2026-11-29T19:00:00-05:30", "2026-11-29T19:00", "2026", "2026-11",
		"+002026-11-29T19:00:00Z", "-000001-01-01T00:00:00Z", "-000000-01-01T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T24:00:01Z",
		"2026-11-29T19:00:00.123456Z", "2026-11-29T19:00:00.1Z", "2026-02-31", "2026-04-31T10:00:00Z", "2026-13-01", "2026-00-10",
		"2026-11-29T19:00:00 Z", "2026-11-29T19:00:00+01", "2026-11-29T19:00:00.Z", "2026-11-29T25:00:00Z", "2026-11-29T19:60:00Z",
		"", "   ", "now", "+275760-09-13T00:00:00.000Z", "+275760-09-13T00:00:00.001Z", "2026-11-29T19:00:00.000+00:00",
	}
	numbers = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 123456789, 1e20, 1e21, 1.5e21, 1e-6, 1e-7, 1.5e-7, -2.5e-8,
		123456.789, 5e-324, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	values = []string{`null`, `false`, `true`, `0`, `-0`, `0.0`, `0e5`, `-0.000`, `1`, `0.1`, `1e-999`, `1e999`, `""`, `" "`, `"0"`,
		`"false"`, `"\u0000"`, `{}`, `[]`, `[0]`}
)

// nodeAnswers are Node's answers for the corpus: computed live when Node is
// here (and written to testdata under -update), else read from testdata.
type nodeAnswers struct {
	Dates   []*float64 `json:"dates"` // null for NaN
	Numbers []string   `json:"numbers"`
	Truthy  []bool     `json:"truthy"`
}

func answers(t *testing.T) nodeAnswers {
	golden := filepath.Join("testdata", "node.json")
	var a nodeAnswers
	node, err := exec.LookPath("node")
	if err != nil {
		b, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	in, _ := json.Marshal(map[string]any{"dates": dates, "values": values})
	nums := make([]string, len(numbers))
	for i, f := range numbers {
		switch {
		case math.IsNaN(f):
			nums[i] = "NaN"
		case math.IsInf(f, 1):
			nums[i] = "Infinity"
		case math.IsInf(f, -1):
			nums[i] = "-Infinity"
		case f == 0 && math.Signbit(f):
			nums[i] = "-0"
		default:
			nums[i] = Number(f) // exact in both languages; Node prints it back its way
		}
	}
	numJSON, _ := json.Marshal(nums)
	script := `const i = ` + string(in) + `; const n = ` + string(numJSON) + `;
console.log(JSON.stringify({
  dates: i.dates.map(s => { const v = new Date(s).getTime(); return Number.isNaN(v) ? null : v; }),
  numbers: n.map(s => String(Number(s))),
  truthy: i.values.map(v => Boolean(JSON.parse(v))),
}));`
	cmd := exec.Command(node, "-e", script)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(golden); err != nil || string(b) != string(out) {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s from Node", golden)
	}
	return a
}

// TestAgainstNode: Date, Number and Truthy give Node's answers.
func TestAgainstNode(t *testing.T) {
	old := time.Local
	time.Local = time.UTC // Node ran with TZ=UTC: date-times without an offset are local time
	defer func() { time.Local = old }()
	a := answers(t)
	for i, s := range dates {
		ms, ok := Date(s)
		want := a.Dates[i]
		if (want == nil) != !ok || (ok && float64(ms) != *want) {
			t.Errorf("Date(%q) = %d, %v; Node: %v", s, ms, ok, want)
		}
	}
	for i, f := range numbers {
		if got := Number(f); got != a.Numbers[i] {
			t.Errorf("Number(%v) = %q; Node: %q", f, got, a.Numbers[i])
		}
	}
	for i, v := range values {
		if got := Truthy([]byte(v)); got != a.Truthy[i] {
			t.Errorf("Truthy(%s) = %v; Node: %v", v, got, a.Truthy[i])
		}
	}
}

// FuzzDate: what toISOString writes always reads back exactly, and nothing panics.
func FuzzDate(f *testing.F) {
	for _, s := range dates {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, ok := Date(s)
		if !ok {
			return
		}
		iso := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
		if ms >= 0 && ms < 253402300800000 { // years 1970–9999 print in the four-digit form
			if back, ok := Date(iso); !ok || back != ms {
				t.Fatalf("Date(%q) = %d, but its ISO form %s reads %d, %v", s, ms, iso, back, ok)
			}
		}
	})
}

// FuzzNumber: Number's output reads back as the same float.
func FuzzNumber(f *testing.F) {
	for _, n := range numbers {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n float64) {
		s := Number(n)
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return
		}
		var back float64
		if err := json.Unmarshal([]byte(s), &back); err != nil || back != n && !(n == 0 && back == 0) {
			t.Fatalf("Number(%v) = %q reads back as %v (%v)", n, s, back, err)
		}
	})
}
