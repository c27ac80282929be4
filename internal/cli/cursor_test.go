package cli

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/google/go-cmp/cmp"
)

const cursorsFixture = "testdata/tree/cursors.jsonl"

func TestCursorLs(t *testing.T) {
	r := runArbor(t, "", "cursor", "ls", cursorsFixture)
	want := "* main                        leaf 66ff1152\n" +
		"  30e8aee4  review            leaf 454ab463\n" +
		"  44558891                    leaf 72a0b8e4\n"
	if diff := cmp.Diff(want, r.out); diff != "" || r.code != 0 {
		t.Errorf("exit %d, stdout (-want +got):\n%s", r.code, diff)
	}
	r = runArbor(t, "", "cursor", "ls", cursorsFixture, "--json")
	var got []session.CursorInfo
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := []session.CursorInfo{
		{ID: "main", Leaf: "66ff1152", Active: true},
		{ID: "30e8aee4", Name: "review", Leaf: "454ab463"},
		{ID: "44558891", Leaf: "72a0b8e4"},
	}
	if diff := cmp.Diff(wantJSON, got); diff != "" {
		t.Errorf("--json (-want +got):\n%s", diff)
	}
}

func cursorsOf(t *testing.T, f string) []session.CursorInfo {
	t.Helper()
	l, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return l.Cursors()
}

var cursorID = regexp.MustCompile(`^[0-9a-f]{8}\n$`)

func TestCursorEdits(t *testing.T) {
	cases := []editCase{
		{
			name: "new", fixture: cursorsFixture, args: func(f string) []string { return []string{"cursor", "new", f, "fix"} },
			lines: 1,
			check: func(t *testing.T, f string) {
				cs := cursorsOf(t, f)
				last := cs[len(cs)-1]
				if len(cs) != 4 || last.Name != "fix" || last.Leaf != "66ff1152" || last.Active {
					t.Errorf("roster %+v: want a 4th cursor fix at main's leaf, not active", cs)
				}
			},
		},
		{
			name: "new and switch", args: func(f string) []string { return []string{"cursor", "new", f, "--switch"} },
			lines: 2,
			check: func(t *testing.T, f string) {
				cs := cursorsOf(t, f)
				if len(cs) != 2 || !cs[1].Active || cs[1].Leaf != "c3f0679d" {
					t.Errorf("roster %+v: want a second, active cursor at c3f0679d", cs)
				}
			},
		},
		{
			name: "switch", fixture: cursorsFixture, args: func(f string) []string { return []string{"cursor", "switch", f, "review"} },
			out:   func(string) string { return "cursor review is active, at 454ab463\n" },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := leafOf(t, f); got != "454ab463" {
					t.Errorf("active leaf %q after the switch, want review's 454ab463", got)
				}
			},
		},
		{
			name: "rename", fixture: cursorsFixture, args: func(f string) []string { return []string{"cursor", "rename", f, "44558891", "docs", "--json"} },
			out: func(string) string { return `{"id":"44558891","name":"docs","leaf":"72a0b8e4","active":false}` + "\n" },
			// The name goes under 44558891's leaf, then main's leaf is marked
			// again so pi, which continues from the last line, stays on main.
			lines: 2,
			check: func(t *testing.T, f string) {
				if got := leafOf(t, f); got != "66ff1152" {
					t.Errorf("active leaf %q after renaming another cursor, want main's 66ff1152", got)
				}
			},
		},
		{name: "duplicate name", fixture: cursorsFixture, args: func(f string) []string { return []string{"cursor", "new", f, "review"} }, code: 1, errHas: `"review" exists already`},
		{name: "rename to a taken name", fixture: cursorsFixture, args: func(f string) []string { return []string{"cursor", "rename", f, "44558891", "review"} }, code: 1, errHas: `has a cursor named "review" already`},
		{name: "new, invalid UTF-8", fixture: cursorsFixture, args: func(f string) []string { return []string{"cursor", "new", f, "r\xff\xfe"} }, code: 1, errHas: "the cursor name is not UTF-8 text"},
		{name: "rename, invalid UTF-8", fixture: cursorsFixture, args: func(f string) []string { return []string{"cursor", "rename", f, "44558891", "\xc3("} }, code: 1, errHas: "the cursor name is not UTF-8 text"},
		{name: "switch to unknown", args: func(f string) []string { return []string{"cursor", "switch", f, "nope"} }, code: 1, errHas: `no cursor "nope" in `},
		{name: "rename without name", args: func(f string) []string { return []string{"cursor", "rename", f, "main"} }, code: 2, errHas: "give the new name"},
	}
	runEditCases(t, cases)
	r := runArbor(t, "", "cursor", "new", copyFile(t, example, t.TempDir()))
	if r.code != 0 || !cursorID.MatchString(r.out) {
		t.Errorf("cursor new: exit %d, stdout %q: want an 8-hex id", r.code, r.out)
	}
}
