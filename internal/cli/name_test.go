package cli

import (
	"testing"

	"github.com/arborlog/arbor/session/jsonl"
)

func nameOf(t *testing.T, f string) string {
	t.Helper()
	l, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return l.SessionName()
}

func TestName(t *testing.T) {
	cases := []editCase{
		{name: "print", args: func(f string) []string { return []string{"name", f} }, out: func(string) string { return "Fix day units in timeparse\n" }},
		{name: "print json", args: func(f string) []string { return []string{"name", f, "--json"} }, out: func(string) string { return `{"name":"Fix day units in timeparse"}` + "\n" }},
		{
			name: "set, trimmed", args: func(f string) []string { return []string{"name", f, "  Days in timeparse \n"} },
			out:   func(string) string { return "Days in timeparse\n" },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := nameOf(t, f); got != "Days in timeparse" {
					t.Errorf("name %q", got)
				}
			},
		},
		{
			name: "clear", args: func(f string) []string { return []string{"name", f, "--clear", "--json"} },
			out:   func(string) string { return `{"name":null}` + "\n" },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := nameOf(t, f); got != "" {
					t.Errorf("name %q after --clear", got)
				}
			},
		},
		{
			name: "no name", fixture: "testdata/tree/cursors.jsonl", args: func(f string) []string { return []string{"name", f} },
			out: func(string) string { return "" }, errHas: "the session has no name; set one with 'arbor name ",
		},
		// Written, a byte that is not UTF-8 would become U+FFFD: the name is refused.
		{name: "invalid UTF-8", args: func(f string) []string { return []string{"name", f, "caf\xe9"} }, code: 1, errHas: "the name is not UTF-8 text (byte 4 is 0xe9); give it in UTF-8\n"},
		{name: "empty name", args: func(f string) []string { return []string{"name", f, "  "} }, code: 2, errHas: "use --clear"},
		{name: "name and clear", args: func(f string) []string { return []string{"name", f, "x", "--clear"} }, code: 2, errHas: "not both"},
	}
	runEditCases(t, cases)
}
