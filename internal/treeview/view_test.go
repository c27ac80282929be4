package treeview

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"pgregory.net/rapid"
)

// checkTreeView asserts what every drawing of a log must satisfy, whatever the
// filter: each shown entry drawn once; each hangs from its nearest shown
// ancestor that is not a marker; the leaf mark on the nearest shown entry at
// or above the leaf; every row within the width.
func checkTreeView(t interface {
	Helper()
	Fatalf(string, ...any)
	Errorf(string, ...any)
}, l *session.Log, filter Filter) {
	t.Helper()
	roots := l.Tree()
	leaf := l.Leaf()
	v := New(roots, l, leaf, filter, 60)

	parent := map[*session.TreeNode]*session.TreeNode{}
	var all []*session.TreeNode
	stack := append([]*session.TreeNode(nil), roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		all = append(all, n)
		for _, c := range n.Children {
			parent[c] = n
			stack = append(stack, c)
		}
	}
	if v.Total != l.Len() || len(all) != l.Len() {
		t.Fatalf("view counts %d entries, tree %d, log %d", v.Total, len(all), l.Len())
	}
	if filter == FilterAll && v.Shown != v.Total {
		t.Errorf("--filter all shows %d of %d entries", v.Shown, v.Total)
	}
	lines := v.Lines()
	if len(lines) != v.Shown {
		t.Fatalf("%d rows for %d shown entries", len(lines), v.Shown)
	}
	// Each draws what Lines does; each row says what Describe says of its
	// entry (what the row keeps of its description is all of it).
	i := 0
	v.Each(func(ln Line) {
		if i < len(lines) && !slices.Equal(ln, lines[i]) {
			t.Errorf("Each draws row %d as %q, Lines as %q", i, ln, lines[i])
		}
		i++
	})
	if i != len(lines) {
		t.Errorf("Each draws %d rows, Lines %d", i, len(lines))
	}
	for _, r := range v.Rows(nil) {
		if got, want := v.Says(r), v.Describe(r.Node.Entry); !slices.Equal(got, want) {
			t.Errorf("row of %s says %q, Describe %q", r.Node.Entry.ID, got, want)
		}
	}
	seen := map[string]bool{}
	for _, ln := range lines {
		id := strings.TrimSpace(ln[1].Text)
		if seen[id] {
			t.Errorf("entry %s drawn twice", id)
		}
		seen[id] = true
	}

	// The expected parent of a shown entry: walk up the real tree.
	hangsFrom := map[*session.TreeNode]*session.TreeNode{}
	for _, r := range v.rows {
		if r.parent >= 0 {
			hangsFrom[r.n] = v.rows[r.parent].n
		}
	}
	for _, n := range all {
		if !v.visible(n) {
			if seen[n.Entry.ID] {
				t.Errorf("hidden entry %s is drawn", n.Entry.ID)
			}
			continue
		}
		if !seen[n.Entry.ID] {
			t.Errorf("shown entry %s is not drawn", n.Entry.ID)
		}
		var want *session.TreeNode
		for a := parent[n]; a != nil; a = parent[a] {
			if v.visible(a) && !a.Entry.IsMarker() {
				want = a
				break
			}
		}
		if got := hangsFrom[n]; got != want {
			t.Errorf("entry %s hangs from %v, want its nearest shown ancestor %v", n.Entry.ID, idOfNode(got), idOfNode(want))
		}
	}
	checkFolds(t, v, lines, hangsFrom)
	if leaf != nil {
		var want *session.TreeNode
		for _, n := range all {
			if n.Entry.ID == leaf.ID {
				for a := n; a != nil; a = parent[a] {
					if v.visible(a) {
						want = a
						break
					}
				}
			}
		}
		if v.leafMark != want {
			t.Errorf("leaf %s marked on %v, want %v", leaf.ID, idOfNode(v.leafMark), idOfNode(want))
		}
	}
}

// checkFolds: Rows draws what Lines does, and folding an entry (a few of
// them, each alone) leaves out exactly the entries hanging below it, the
// others drawn as before.
func checkFolds(t interface {
	Helper()
	Errorf(string, ...any)
}, v *View, lines []Line, hangsFrom map[*session.TreeNode]*session.TreeNode) {
	t.Helper()
	rows := v.Rows(nil)
	if len(rows) != len(lines) {
		t.Errorf("Rows has %d rows, Lines %d", len(rows), len(lines))
		return
	}
	for i, r := range rows {
		if id := strings.TrimSpace(lines[i][1].Text); r.Node.Entry.ID != id || lines[i][2].Text != r.Prefix {
			t.Errorf("row %d is %s %q, its line %s %q", i, r.Node.Entry.ID, r.Prefix, id, lines[i][2].Text)
		}
	}
	folds := 0
	for _, f := range rows {
		if f.Kids == 0 || folds == 8 {
			continue
		}
		folds++
		below := func(n *session.TreeNode) bool {
			for a := hangsFrom[n]; a != nil; a = hangsFrom[a] {
				if a == f.Node {
					return true
				}
			}
			return false
		}
		var want []Row
		for _, r := range rows {
			if !below(r.Node) {
				want = append(want, r)
			}
		}
		got := v.Rows(func(n *session.TreeNode) bool { return n == f.Node })
		if len(got) != len(want) {
			t.Errorf("folding %s: %d rows, want %d", f.Node.Entry.ID, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i].Node != want[i].Node || got[i].Prefix != want[i].Prefix || got[i].Kids != want[i].Kids {
				t.Errorf("folding %s: row %d is %s %q, want %s %q", f.Node.Entry.ID, i, got[i].Node.Entry.ID, got[i].Prefix, want[i].Node.Entry.ID, want[i].Prefix)
				break
			}
		}
	}
}

func idOfNode(n *session.TreeNode) string {
	if n == nil {
		return "(top)"
	}
	return n.Entry.ID
}

// TestTreeViewProperties builds random sessions (every kind of entry, branch
// moves, resets, cursors, labels) and checks the drawing of each with every
// filter.
func TestTreeViewProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := session.New("/home/dev/p")
		var ids []string
		add := func(e *session.Entry, err error) {
			if err != nil {
				t.Fatalf("append: %v", err)
			}
			ids = append(ids, e.ID)
		}
		text := func(s string) session.Content {
			return session.Content{Blocks: []session.Block{{Type: "text", Text: s}}}
		}
		steps := rapid.IntRange(0, 40).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 11).Draw(t, "op") {
			case 0:
				m, _ := session.NewMessage(session.MessageData{Role: session.RoleUser, Content: session.TextContent(rapid.StringN(0, 30, -1).Draw(t, "text"))})
				add(l.AppendMessage(m))
			case 1:
				m, _ := session.NewMessage(session.MessageData{Role: session.RoleAssistant, Content: text("ok"), StopReason: "stop"})
				add(l.AppendMessage(m))
			case 2: // an assistant message that only calls a tool, then its result
				id := "call_" + rapid.StringMatching(`[a-z]{4}`).Draw(t, "call")
				m, _ := session.NewMessage(session.MessageData{Role: session.RoleAssistant, StopReason: rapid.SampledFrom([]string{"toolUse", "error", "aborted"}).Draw(t, "stop"),
					Content: session.Content{Blocks: []session.Block{{Type: "toolCall", ID: id, Name: "read", Arguments: []byte(`{"path":"a.go"}`)}}}})
				add(l.AppendMessage(m))
				r, _ := session.NewMessage(session.MessageData{Role: session.RoleToolResult, ToolCallID: id, ToolName: "read", Content: text("package a")})
				add(l.AppendMessage(r))
			case 3:
				add(l.AppendModelChange("anthropic", "claude-sonnet-4-5"))
			case 4:
				add(l.AppendThinkingLevelChange("high"))
			case 5:
				add(l.AppendCustom("ext.state", map[string]int{"n": 1}))
			case 6:
				add(l.SetSessionName(rapid.SampledFrom([]string{"", "name"}).Draw(t, "name")))
			case 7:
				if len(ids) > 0 {
					add(l.SetLabel(rapid.SampledFrom(ids).Draw(t, "label target"), rapid.SampledFrom([]string{"", "x", "y"}).Draw(t, "label")))
				}
			case 8:
				if len(ids) > 0 {
					if id := rapid.SampledFrom(ids).Draw(t, "branch to"); !l.Entry(id).IsMarker() {
						if err := l.BranchTo(id); err != nil {
							t.Fatal(err)
						}
					}
				}
			case 9:
				if err := l.ResetLeaf(); err != nil {
					t.Fatal(err)
				}
			case 10:
				if _, err := l.NewCursor(""); err != nil {
					t.Fatal(err)
				}
			case 11:
				cs := l.Cursors()
				if err := l.Switch(rapid.SampledFrom(cs).Draw(t, "switch").ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, f := range Filters {
			checkTreeView(t, l, f)
		}
	})
}

const (
	example  = "../../examples/refactor.jsonl"
	piCorpus = "../../testdata/pi"
)

// FuzzTreeView draws whatever loads: no panic, and the same invariants.
func FuzzTreeView(f *testing.F) {
	for _, p := range []string{example, "../cli/testdata/tree/cursors.jsonl", "../cli/testdata/tree/roots.jsonl", "../cli/testdata/tree/marker-parent.jsonl",
		"../../testdata/pi/sessions/dmg-cycle.jsonl", "../../testdata/pi/sessions/dmg-dup-ids.jsonl", "../../testdata/pi/sessions/v3-edges.jsonl"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l := session.Load(data)
		for _, filter := range Filters {
			checkTreeView(t, l, filter)
		}
	})
}

// BenchmarkTreeView draws a 1 MB pi session (106 entries, large tool results)
// as `arbor tree` does, from the loaded log to the described rows.
func BenchmarkTreeView(b *testing.B) {
	data, err := os.ReadFile("../../testdata/pi/sessions/big-1mb.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	l := session.Load(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		v := New(l.Tree(), l, l.Leaf(), FilterDefault, 100)
		v.Each(func(Line) {})
	}
}

// TestTreeViewCorpus draws every session of the pi corpus (random branchy
// sessions pi wrote, old versions, damaged files) with every filter.
func TestTreeViewCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(piCorpus, "sessions", "*.jsonl"))
	if len(files) == 0 {
		t.Fatalf("no sessions under %s", piCorpus)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := session.Load(data)
		for _, filter := range Filters {
			t.Run(filepath.Base(f)+"/"+string(filter), func(t *testing.T) { checkTreeView(t, l, filter) })
		}
	}
}

// TestFlat: Flat is strings.Fields joined by single spaces, whatever the text.
func TestFlat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringOf(rapid.SampledFrom([]rune{'a', 'é', ' ', '\n', '\t', '\u00a0', '\u2028', '\u3000', 'x'})).Draw(t, "s")
		if got, want := Flat(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("Flat(%q) = %q, want %q", s, got, want)
		}
	})
}
