package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The pi 1.6.0 interop corpus (testdata/pi16/README.md): sessions pi 1.6.0
// wrote with gen16 (system messages, usage entries, context edits, compactions
// with checkpoints, branch summaries with usage) and what pi 1.6.0 printed.
const pi16Corpus = "../../testdata/pi16"

func pi16Leaves(t *testing.T) map[string][]string {
	t.Helper()
	var leaves map[string][]string
	b, err := os.ReadFile(filepath.Join(pi16Corpus, "leaves.json"))
	if err != nil {
		t.Fatalf("the pi 1.6.0 corpus has no leaves.json: %v", err)
	}
	if err := json.Unmarshal(b, &leaves); err != nil {
		t.Fatalf("leaves.json: %v", err)
	}
	return leaves
}

// TestPi16Interop runs arbor on every session pi 1.6.0 wrote and checks that
// `context --json` (at the leaf, at null and at each leaf in leaves.json),
// `context --format llm`, `context --system --json`, `stats --json`'s usage by
// model, `compact --dry-run --json` at four keep values (pi's prepareCompaction,
// null when it makes no plan), `tree --json` and `info --json` say what pi 1.6.0 says: byte for byte
// where pi prints JSON of the session's own values, field by field for the tree
// and info.
func TestPi16Interop(t *testing.T) {
	sessions, _ := filepath.Glob(filepath.Join(pi16Corpus, "sessions", "*.jsonl"))
	if len(sessions) == 0 {
		t.Fatalf("no sessions under %s/sessions: the pi 1.6.0 corpus is missing", pi16Corpus)
	}
	leaves := pi16Leaves(t)
	n := 0
	for _, file := range sessions {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			defer unchanged(t, file)()
			type check struct {
				expected string
				args     []string
				compare  func(t *testing.T, want, got []byte)
			}
			checks := []check{
				{"context", []string{"context", file, "--json"}, sameBytes},
				{"context-null", []string{"context", file, "--json", "--leaf", "null"}, sameBytes},
				{"llm", []string{"context", file, "--format", "llm"}, sameBytes},
				{"system", []string{"context", file, "--system", "--json"}, sameBytes},
				{"tree", []string{"tree", file, "--json"}, sameTree},
				{"info", []string{"info", file, "--json"}, sameInfo},
				{"usage", []string{"stats", file, "--json"}, sameUsage},
			}
			for _, keep := range []string{"20000", "4000", "1000", "100"} {
				checks = append(checks, check{"prepare-" + keep, []string{"compact", file, "--dry-run", "--json", "--keep-recent-tokens", keep}, sameBytes})
			}
			if len(leaves[name]) == 0 {
				t.Fatalf("leaves.json names no leaves for %s", name)
			}
			for _, leaf := range leaves[name] {
				checks = append(checks,
					check{"context-" + leaf, []string{"context", file, "--json", "--leaf", leaf}, sameBytes},
					check{"llm-" + leaf, []string{"context", file, "--format", "llm", "--leaf", leaf}, sameBytes},
					check{"system-" + leaf, []string{"context", file, "--system", "--json", "--leaf", leaf}, sameBytes})
			}
			for _, c := range checks {
				t.Run(c.expected, func(t *testing.T) {
					want, err := os.ReadFile(filepath.Join(pi16Corpus, "expected", name+"."+c.expected+".json"))
					if err != nil {
						t.Fatalf("pi 1.6.0's output is missing: %v", err)
					}
					r := runArbor(t, "", c.args...)
					if r.code != 0 {
						t.Fatalf("arbor %s: exit %d: %s", strings.Join(c.args, " "), r.code, r.err)
					}
					n++
					c.compare(t, want, []byte(r.out))
				})
			}
		})
	}
	t.Logf("%d outputs compared with pi 1.6.0's", n)
}

// piUsage is one row of pi 1.6.0's getUsageCostBreakdown.
type piUsage struct {
	Key    string  `json:"key"`
	Cost   float64 `json:"cost"`
	Tokens float64 `json:"tokens"`
}

// sameUsage compares pi's usage breakdown with `arbor stats --json`'s apiUsage.byModel.
func sameUsage(t *testing.T, want, got []byte) {
	t.Helper()
	var pi []piUsage
	if err := json.Unmarshal(want, &pi); err != nil {
		t.Fatalf("pi's usage: %v", err)
	}
	var s struct {
		APIUsage struct {
			ByModel json.RawMessage `json:"byModel"`
		} `json:"apiUsage"`
	}
	if err := json.Unmarshal(got, &s); err != nil {
		t.Fatalf("stats --json: %v", err)
	}
	sameBytes(t, want, s.APIUsage.ByModel)
}
