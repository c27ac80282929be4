package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/google/go-cmp/cmp"
)

const example = "../../examples/refactor.jsonl"

// editCase is one run of a command that writes to a copy of a fixture.
type editCase struct {
	name    string
	fixture string                  // copied into a temporary folder; "" for the example
	args    func(f string) []string // arguments, given the copy's path
	code    int
	out     func(f string) string // exact stdout
	errHas  string                // a part of stderr ("" means stderr must be empty)
	lines   int                   // lines the command must add to the file
	check   func(t *testing.T, f string)
}

func runEditCases(t *testing.T, cases []editCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.fixture
			if src == "" {
				src = example
			}
			f := copyFile(t, src, t.TempDir())
			before, _ := os.ReadFile(f)
			r := runArbor(t, "", tc.args(f)...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tc.code, r.err)
			}
			if tc.out != nil {
				if diff := cmp.Diff(tc.out(f), r.out); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			}
			if tc.errHas == "" && r.err != "" {
				t.Errorf("stderr %q, want none", r.err)
			}
			if !strings.Contains(r.err, tc.errHas) {
				t.Errorf("stderr %q lacks %q", r.err, tc.errHas)
			}
			after, _ := os.ReadFile(f)
			if !bytes.HasPrefix(after, before) {
				t.Fatalf("the command rewrote %s instead of appending to it", f)
			}
			if got := bytes.Count(after[len(before):], []byte("\n")); got != tc.lines {
				t.Errorf("%d lines appended, want %d:\n%s", got, tc.lines, after[len(before):])
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

func leafOf(t *testing.T, f string) string {
	t.Helper()
	l, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if e := l.Leaf(); e != nil {
		return e.ID
	}
	return ""
}

// contextJSON is what `arbor context --json` prints for f and these flags.
func contextJSON(t *testing.T, f string, flags ...string) string {
	t.Helper()
	r := runArbor(t, "", append([]string{"context", f, "--json"}, flags...)...)
	if r.code != 0 {
		t.Fatalf("context: exit %d: %s", r.code, r.err)
	}
	return r.out
}

func TestBranch(t *testing.T) {
	cases := []editCase{
		{
			name: "to an entry", args: func(f string) []string { return []string{"branch", f, "72a0b8e4"} },
			out:   func(string) string { return "cursor main moved from c3f0679d to 72a0b8e4\n" },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := leafOf(t, f); got != "72a0b8e4" {
					t.Errorf("leaf after reopen %q, want 72a0b8e4", got)
				}
				if diff := cmp.Diff(contextJSON(t, f, "--leaf", "72a0b8e4"), contextJSON(t, f)); diff != "" {
					t.Errorf("context after the move is not the context at 72a0b8e4:\n%s", diff)
				}
			},
		},
		{
			name: "json", args: func(f string) []string { return []string{"branch", f, "e1b8045d", "--json"} },
			out: func(string) string {
				return `{"cursor":"main","leaf":"e1b8045d","from":"c3f0679d","moved":true}` + "\n"
			},
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := leafOf(t, f); got != "e1b8045d" {
					t.Errorf("leaf %q, want e1b8045d", got)
				}
			},
		},
		{
			name: "to the leaf already", args: func(f string) []string { return []string{"branch", f, "c3f0679d"} },
			out: func(string) string { return "cursor main is at c3f0679d already\n" },
		},
		{
			name: "root", args: func(f string) []string { return []string{"branch", f, "--root"} },
			out:   func(string) string { return "cursor main moved from c3f0679d to before the first entry\n" },
			lines: 1,
			check: func(t *testing.T, f string) {
				if got := leafOf(t, f); got != "" {
					t.Errorf("leaf %q after --root, want none", got)
				}
				if got, want := contextJSON(t, f), `{"messages":[],"thinkingLevel":"off","model":null}`+"\n"; got != want {
					t.Errorf("context after --root %s, want %s", got, want)
				}
			},
		},
		{
			name: "another cursor", fixture: "testdata/tree/cursors.jsonl",
			args:  func(f string) []string { return []string{"branch", f, "c07e5a13", "--cursor", "review"} },
			out:   func(string) string { return "cursor review moved from 454ab463 to c07e5a13\n" },
			lines: 1,
			check: func(t *testing.T, f string) {
				l, err := jsonl.Read(f)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range l.Cursors() {
					want := map[string]string{"main": "66ff1152", "review": "c07e5a13", "44558891": "72a0b8e4"}[treeview.CursorName(c)]
					if c.Leaf != want {
						t.Errorf("cursor %s at %q, want %q", treeview.CursorName(c), c.Leaf, want)
					}
				}
			},
		},
		{
			name: "root twice", fixture: "testdata/tree/cleared.jsonl", args: func(f string) []string { return []string{"branch", f, "--root"} },
			out: func(string) string { return "cursor main is before the first entry already\n" },
		},
		{
			name: "unknown entry", args: func(f string) []string { return []string{"branch", f, "0badbeef"} }, code: 1,
			errHas: `no entry "0badbeef" in `,
		},
		{
			name: "a marker", fixture: "testdata/tree/cursors.jsonl", code: 1,
			args:   func(f string) []string { return []string{"branch", f, "5cd92013"} },
			errHas: "entry 5cd92013 in ",
		},
		{
			name: "unknown cursor", args: func(f string) []string { return []string{"branch", f, "72a0b8e4", "--cursor", "nope"} }, code: 1,
			errHas: `no cursor "nope" in `,
		},
		{name: "no target", args: func(f string) []string { return []string{"branch", f} }, code: 2, errHas: "which entry?"},
		{name: "both", args: func(f string) []string { return []string{"branch", f, "72a0b8e4", "--root"} }, code: 2, errHas: "not both"},
	}
	runEditCases(t, cases)
}

// TestBranchLocked checks that a second writer is refused at once, naming the
// file, and that nothing is written.
func TestBranchLocked(t *testing.T) {
	f := copyFile(t, example, t.TempDir())
	s, err := jsonl.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, _ := os.ReadFile(f)
	r := runArbor(t, "", "branch", f, "72a0b8e4")
	if r.code != 1 || !strings.Contains(r.err, filepath.Base(f)) || strings.Count(r.err, "\n") != 1 {
		t.Errorf("exit %d, stderr %q: want exit 1 and one line naming the file", r.code, r.err)
	}
	if after, _ := os.ReadFile(f); !bytes.Equal(before, after) {
		t.Error("the refused command wrote to the file")
	}
}

// TestBranchRepairsTornTail checks that a write to a file with a torn last
// line moves the fragment aside first and says so (SPEC §8 "torn last line").
func TestBranchRepairsTornTail(t *testing.T) {
	src := "../../testdata/pi/sessions/dmg-torn-tail.jsonl"
	f := copyFile(t, src, t.TempDir())
	before, _ := os.ReadFile(f)
	r := runArbor(t, "", "branch", f, "46bad6c8")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if !strings.Contains(r.err, f) || !strings.Contains(r.err, "lacked its newline") {
		t.Errorf("stderr %q does not say the torn line was ended in place", r.err)
	}
	after, _ := os.ReadFile(f)
	// Nothing cut or moved: the fragment gets its newline where it is.
	if !bytes.HasPrefix(after, append(bytes.Clone(before), '\n')) {
		t.Errorf("the file no longer starts with its old bytes and a newline")
	}
	if _, err := os.Stat(f + ".torn"); err == nil {
		t.Errorf("the fragment was moved to %s.torn", f)
	}
	if got := leafOf(t, f); got != "46bad6c8" {
		t.Errorf("leaf %q after the repair and the move, want 46bad6c8", got)
	}
}
