package cli

import (
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/internal/treeview"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/google/go-cmp/cmp"
)

// TestTreeGolden draws fixture sessions with every filter and compares the
// drawings with testdata/tree/*.golden (go test -update rewrites them).
func TestTreeGolden(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("HOME", "/nonexistent")
	cases := []struct {
		name string
		file string
		args []string
	}{
		{"refactor", "../../examples/refactor.jsonl", nil},
		{"refactor-all", "../../examples/refactor.jsonl", []string{"--filter", "all"}},
		{"refactor-no-tools", "../../examples/refactor.jsonl", []string{"--filter", "no-tools"}},
		{"refactor-user", "../../examples/refactor.jsonl", []string{"--filter", "user"}},
		{"refactor-labeled", "../../examples/refactor.jsonl", []string{"--filter", "labeled"}},
		{"roots", "testdata/tree/roots.jsonl", nil},
		{"roots-all", "testdata/tree/roots.jsonl", []string{"--filter", "all"}},
		{"cursors", "testdata/tree/cursors.jsonl", nil},
		{"cursors-all", "testdata/tree/cursors.jsonl", []string{"--filter", "all"}},
		{"cursors-review", "testdata/tree/cursors.jsonl", []string{"--cursor", "review"}},
		{"header-only", "testdata/tree/header-only.jsonl", nil},
		// An entry whose parent is a marker hangs from the marker's parent.
		{"marker-parent", "testdata/tree/marker-parent.jsonl", nil},
		{"marker-parent-all", "testdata/tree/marker-parent.jsonl", []string{"--filter", "all"}},
		// The cursor was cleared: nothing is on its path.
		{"cleared", "testdata/tree/cleared.jsonl", nil},
		// Claude Code's and Codex's tools, read in place: one line a call,
		// naming the command, the path or the pattern as pi's tools do.
		{"claude-tools", "../../testdata/foreign/claude-tools.jsonl", nil},
		{"claude-tools-all", "../../testdata/foreign/claude-tools.jsonl", []string{"--filter", "all"}},
		{"codex-tools", "../../testdata/foreign/" + codexToolsFixture, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runArbor(t, "", append([]string{"tree", tc.file}, tc.args...)...)
			if r.code != 0 || r.err != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.err)
			}
			golden(t, filepath.Join("tree", tc.name+".golden"), r.out)
		})
	}
}

// codexToolsFixture is a Codex rollout named as Codex names them.
const codexToolsFixture = "rollout-2026-03-02T10-00-00-cccccccc-0000-4000-8000-000000000003.jsonl"

func TestTreeErrors(t *testing.T) {
	dir := t.TempDir()
	example, err := filepath.Abs("../../examples/refactor.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		args    []string
		code    int
		errHas  string
		outWant string
	}{
		{"bad filter", []string{"tree", "../../examples/refactor.jsonl", "--filter", "tools"}, 2, `--filter must be one of default, no-tools, user, labeled, all, not "tools"`, ""},
		{"unknown cursor", []string{"tree", "../../examples/refactor.jsonl", "--cursor", "nope"}, 1, `no cursor "nope" in ` + example + `; 'arbor cursor ls ` + example + `' lists them`, ""},
		{"missing file", []string{"tree", filepath.Join(dir, "gone.jsonl")}, 1, "gone.jsonl: no such session file", ""},
		{"no argument", []string{"tree"}, 2, "accepts 1 arg(s), received 0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runArbor(t, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tc.code, r.err)
			}
			if !strings.Contains(r.err, tc.errHas) {
				t.Errorf("stderr %q lacks %q", r.err, tc.errHas)
			}
			if first := strings.SplitN(r.err, "\n", 2)[0]; !strings.HasPrefix(first, "arbor: ") {
				t.Errorf("error line %q does not start with 'arbor: '", first)
			}
			if r.out != tc.outWant {
				t.Errorf("stdout %q, want %q", r.out, tc.outWant)
			}
		})
	}
}

// TestTreeJSONKeepsEveryEntry checks that the filters do not touch --json: it
// lists every entry, markers included.
func TestTreeJSONKeepsEveryEntry(t *testing.T) {
	for _, filter := range []string{"default", "user"} {
		r := runArbor(t, "", "tree", "testdata/tree/cursors.jsonl", "--json", "--filter", filter)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		var ids []string
		var walk func(ns []reducedNode)
		walk = func(ns []reducedNode) {
			for _, n := range ns {
				ids = append(ids, n.ID)
				walk(n.Children)
			}
		}
		walk(reduceTree(t, []byte(r.out)))
		data, err := os.ReadFile("testdata/tree/cursors.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(ids), session.Load(data).Len(); got != want {
			t.Errorf("--filter %s: %d entries in --json, want %d", filter, got, want)
		}
	}
}

func TestLineRender(t *testing.T) {
	var ln treeview.Line
	ln.Add(treeview.Dim, "abc  ")
	ln.Add(treeview.Accent, "user: ")
	ln.Add(treeview.Plain, "héllo wörld 漢字")
	cases := []struct {
		width int
		color bool
		want  string
	}{
		{100, false, "abc  user: héllo wörld 漢字"},
		{27, false, "abc  user: héllo wörld 漢字"},
		{26, false, "abc  user: héllo wörld 漢…"},
		{25, false, "abc  user: héllo wörld …"},
		{10, false, "abc  user…"},
		{8, true, "\x1b[2mabc  \x1b[0m\x1b[36mus\x1b[0m…"},
		{0, true, "\x1b[2mabc  \x1b[0m\x1b[36muser: \x1b[0mhéllo wörld 漢字"},
	}
	// Text from a file cannot carry escape sequences or reorder the line.
	evil := treeview.Line{{Style: treeview.Plain, Text: "a\x1b[2Jb\u202Ec\x07"}}
	if got, want := render(evil, 0, true), `a\x1b[2Jb\u202ec\a`; got != want {
		t.Errorf("render kept control characters: %q, want %q", got, want)
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, render(ln, tc.width, tc.color)); diff != "" {
			t.Errorf("render(%d, %v) (-want +got):\n%s", tc.width, tc.color, diff)
		}
		if tc.width > 0 && !tc.color {
			if w := termtext.Width(render(ln, tc.width, false)); w > tc.width {
				t.Errorf("render(%d) is %d columns wide", tc.width, w)
			}
		}
	}
}
