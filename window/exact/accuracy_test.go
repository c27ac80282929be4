package exact

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/window"
)

// sessions are realistic contexts: pi's interop corpus and window's fixtures.
func sessions(t testing.TB) map[string]session.Context {
	out := map[string]session.Context{}
	var files []string
	for _, glob := range []string{"../../testdata/pi/sessions/gen-*.jsonl", "../../testdata/pi/sessions/big-*.jsonl", "../testdata/*.jsonl"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ctx := session.Load(b).Context()
		if len(ctx.Messages) > 0 {
			out[filepath.Base(f)] = ctx
		}
	}
	if len(out) == 0 {
		t.Skip("no sessions found")
	}
	return out
}

type accuracy struct {
	estimated, exact int
	absErr           float64 // sum over messages of |estimate − exact|
	messages         int
}

func measure(ctx session.Context, exact *Counter) accuracy {
	est := window.DefaultEstimator
	ex := window.DefaultEstimator
	ex.Exact = exact
	var a accuracy
	for _, m := range ctx.Messages {
		e, x := est.Message(m), ex.Message(m)
		a.estimated += e
		a.exact += x
		a.absErr += math.Abs(float64(e - x))
		a.messages++
	}
	return a
}

// TestEstimateAgainstExact checks the byte-rate estimate against o200k on
// every realistic session: the total within 10%, which is what budgets need.
func TestEstimateAgainstExact(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var all accuracy
	ctxs := sessions(t)
	names := slices.Sorted(maps.Keys(ctxs))
	for _, name := range names {
		ctx := ctxs[name]
		a := measure(ctx, c)
		all.estimated += a.estimated
		all.exact += a.exact
		all.absErr += a.absErr
		all.messages += a.messages
		errPct := 100 * float64(a.estimated-a.exact) / float64(a.exact)
		t.Logf("%-22s %5d messages  estimate %8d  exact %8d  total error %+6.1f%%  mean |error| per message %5.1f tokens",
			name, a.messages, a.estimated, a.exact, errPct, a.absErr/float64(a.messages))
		if math.Abs(errPct) > 10 && a.exact > 2000 {
			t.Errorf("%s: estimate %d is %.1f%% off the exact %d", name, a.estimated, errPct, a.exact)
		}
	}
	t.Logf("all: estimate %d exact %d error %+.1f%%", all.estimated, all.exact, 100*float64(all.estimated-all.exact)/float64(all.exact))
}

func TestKinds(t *testing.T) {
	c, _ := New()
	prose := strings.Repeat("The scanner drops the last line when the file has no trailing newline, so we flush it at the end. ", 40)
	est := window.DefaultEstimator
	for _, tc := range []struct {
		name string
		text string
		kind window.Kind
	}{
		{"prose", prose, window.Prose},
		{"go", strings.Repeat("func (s *Scanner) Scan() bool {\n\tif s.done {\n\t\treturn false\n\t}\n", 40), window.Code},
	} {
		e, x := est.Text(tc.text, tc.kind), c.Count(tc.text)
		if d := math.Abs(float64(e-x)) / float64(x); d > 0.35 {
			t.Errorf("%s: estimate %d, exact %d", tc.name, e, x)
		}
	}
}

func BenchmarkEstimate(b *testing.B) {
	ctxs := sessions(b)
	ctx := ctxs["long.jsonl"]
	var bytes int64
	for _, m := range ctx.Messages {
		bytes += int64(len(m.Raw))
	}
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("estimate", func(b *testing.B) {
		b.SetBytes(bytes)
		for b.Loop() {
			for _, m := range ctx.Messages {
				window.DefaultEstimator.Message(m)
			}
		}
		// how far the estimate is from o200k over every realistic session
		var est, exact int
		for _, ctx := range ctxs {
			a := measure(ctx, c)
			est += a.estimated
			exact += a.exact
		}
		b.ReportMetric(100*float64(est-exact)/float64(exact), "%error")
	})
	b.Run("exact", func(b *testing.B) {
		ex := window.DefaultEstimator
		ex.Exact = c
		b.SetBytes(bytes)
		for b.Loop() {
			for _, m := range ctx.Messages {
				ex.Message(m)
			}
		}
	})
}

// TestBuildWithExact fits a context by exact counts (the planner renders on
// several goroutines, so this also runs the tokenizer concurrently).
func TestBuildWithExact(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ex := window.DefaultEstimator
	ex.Exact = c
	ctx := sessions(t)["long.jsonl"]
	r, err := window.Build(ctx, nil, window.Options{Budget: 5000, Estimator: &ex})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, m := range r.Messages {
		total += ex.Message(m.ContextMessage)
	}
	if total > 5000 || total != r.Tokens {
		t.Errorf("exact count of the fitted context %d, planner says %d, budget 5000", total, r.Tokens)
	}
}
