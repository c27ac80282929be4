package cli

import (
	"testing"

	"github.com/arborlog/arbor/session/jsonl"
)

func labelOf(t *testing.T, f, id string) string {
	t.Helper()
	l, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return l.Label(id)
}

func TestLabel(t *testing.T) {
	cases := []editCase{
		{
			name: "set", args: func(f string) []string { return []string{"label", f, "e1b8045d", "asks the user"} },
			out:   func(string) string { return "labeled e1b8045d \"asks the user\"\n" },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := labelOf(t, f, "e1b8045d"); got != "asks the user" {
					t.Errorf("label %q", got)
				}
			},
		},
		{
			name: "replace", args: func(f string) []string { return []string{"label", f, "72a0b8e4", "cause", "--json"} },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := labelOf(t, f, "72a0b8e4"); got != "cause" {
					t.Errorf("label %q, want cause", got)
				}
				r := runArbor(t, "", "tree", f, "--filter", "labeled")
				if want := "  72a0b8e4  • [cause] [read: parse.go]\n"; r.out[:len(want)] != want {
					t.Errorf("labeled view starts %q, want %q", r.out, want)
				}
			},
		},
		{
			name: "clear without a label", args: func(f string) []string { return []string{"label", f, "a4c3e097"} },
			out:   func(string) string { return "cleared the label of a4c3e097\n" },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := labelOf(t, f, "a4c3e097"); got != "" {
					t.Errorf("label %q after clearing", got)
				}
			},
		},
		{
			name: "clear flag", args: func(f string) []string { return []string{"label", f, "90cd346a", "--clear"} },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := labelOf(t, f, "90cd346a"); got != "" {
					t.Errorf("label %q after --clear", got)
				}
			},
		},
		{name: "unknown entry", args: func(f string) []string { return []string{"label", f, "0badbeef", "x"} }, code: 1, errHas: `no entry "0badbeef" in `},
		{name: "a marker", fixture: "testdata/tree/cursors.jsonl", args: func(f string) []string { return []string{"label", f, "3ec6c239", "x"} }, code: 1, errHas: "is an arbor marker"},
		{name: "invalid UTF-8", args: func(f string) []string { return []string{"label", f, "90cd346a", "ok \x80 no"} }, code: 1, errHas: "the label is not UTF-8 text"},
		{name: "label and clear", args: func(f string) []string { return []string{"label", f, "90cd346a", "x", "--clear"} }, code: 2, errHas: "not both"},
		{name: "no entry id", args: func(f string) []string { return []string{"label", f} }, code: 2, errHas: "accepts between 2 and 3 arg(s)"},
	}
	runEditCases(t, cases)
}
