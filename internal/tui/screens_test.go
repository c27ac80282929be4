package tui

import (
	"context"
	"github.com/arborlog/arbor/compaction"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/charmbracelet/x/ansi"
)

// TestPickerScreens draws the picker in each of its states at 100×30.
func TestPickerScreens(t *testing.T) {
	f := newFixture(t)
	steps := []struct {
		name string
		do   func(h *harness)
	}{
		{"current", func(h *harness) {}},
		{"all", func(h *harness) { h.keys("tab") }},
		{"all-recent", func(h *harness) { h.keys("tab", "ctrl+s") }},
		{"search-title", func(h *harness) { h.keys("tab"); h.typeText("timeparse") }},
		{"search-fulltext", func(h *harness) { h.keys("tab"); h.typeText(`"special case"`) }},
		{"search-regex", func(h *harness) { h.keys("tab"); h.typeText(`re:unit\(\)`) }},
		{"search-bad-regex", func(h *harness) { h.keys("tab"); h.typeText(`re:(`) }},
		{"named", func(h *harness) { h.keys("tab", "ctrl+n") }},
		{"paths", func(h *harness) { h.keys("tab", "ctrl+p") }},
		{"rename", func(h *harness) { h.keys("ctrl+r") }},
		{"delete-confirm", func(h *harness) { h.keys("ctrl+d") }},
		{"help", func(h *harness) { h.keys("?") }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			h := newHarness(t, BrowseOptions{}, 100, 30)
			s.do(h)
			golden(t, "picker-"+s.name, h.screen(f))
		})
	}
}

// TestPickerLoading is the first screen, before the listing arrives: a
// spinner, never a blocked terminal.
func TestPickerLoading(t *testing.T) {
	newFixture(t)
	b := NewBrowser(BrowseOptions{Catalog: catalog.Open(""), Scope: catalog.Scope{Cwd: exampleCwd}})
	defer b.st.cat.Close()
	b.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	b.Init() // the commands are not run: the listing never arrives
	golden(t, "picker-loading", ansi.Strip(b.View().Content))
	b.st.indexing.Store(true)
	b.st.done.Store(120)
	b.st.total.Store(2000)
	golden(t, "picker-indexing", ansi.Strip(b.View().Content))
}

// TestTreeLoading is the tree's first screen while the file is read.
func TestTreeLoading(t *testing.T) {
	f := newFixture(t)
	b := NewBrowser(BrowseOptions{Catalog: catalog.Open(""), Session: f.example})
	defer b.st.cat.Close()
	b.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	b.Init() // the commands are not run: the session never arrives
	golden(t, "tree-loading", strings.ReplaceAll(ansi.Strip(b.View().Content), f.arbor, "$ARBOR"))
}

// TestTreeScreens draws the tree of examples/refactor.jsonl in each state.
func TestTreeScreens(t *testing.T) {
	f := newFixture(t)
	steps := []struct {
		name string
		do   func(h *harness)
	}{
		{"default", func(h *harness) {}},
		{"no-tools", func(h *harness) { h.keys("ctrl+t") }},
		{"user", func(h *harness) { h.keys("ctrl+u") }},
		{"labeled", func(h *harness) { h.keys("ctrl+l") }},
		{"all", func(h *harness) { h.keys("ctrl+a") }},
		{"filter-toggle-back", func(h *harness) { h.keys("ctrl+u", "ctrl+u") }},
		{"search", func(h *harness) { h.typeText("edit parse") }},
		{"folded", func(h *harness) { h.keys("home", "down", "down", "down", "down", "ctrl+left") }},
		{"label", func(h *harness) { h.keys("shift+l") }},
		{"summary-menu", func(h *harness) { h.keys("up", "up", "enter", "down") }},
		{"already-here", func(h *harness) { h.keys("enter") }},
		{"help", func(h *harness) { h.keys("?") }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			h := newHarness(t, BrowseOptions{Session: f.example}, 100, 30)
			s.do(h)
			golden(t, "tree-"+s.name, h.screen(f))
		})
	}
}

// TestResize reflows both views to a small window and back.
func TestResize(t *testing.T) {
	f := newFixture(t)
	h := newHarness(t, BrowseOptions{}, 100, 30)
	h.keys("tab")
	h.send(tea.WindowSizeMsg{Width: 60, Height: 14})
	golden(t, "picker-narrow", h.screen(f))
	h.keys("enter")
	golden(t, "tree-narrow", h.screen(f))
	for _, ln := range strings.Split(h.b.View().Content, "\n") {
		if w := lipWidth(ln); w != 60 {
			t.Errorf("a row of the narrow tree is %d columns, want 60: %q", w, ln)
		}
	}
	if n := strings.Count(h.b.View().Content, "\n") + 1; n != 14 {
		t.Errorf("the narrow tree has %d rows, want 14", n)
	}
}

// TestTreeBranch moves the leaf from the tree, with each kind of summary, and
// checks the file as the store reads it afterwards.
func TestTreeBranch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		choice  []string
		summary bool
		focus   string
	}{
		{"no-summary", []string{"enter"}, false, ""},
		{"summary", []string{"down", "enter"}, true, ""},
		{"instructions", []string{"down", "down", "enter"}, true, "the unit table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			rec := &recorder{}
			h := newHarness(t, BrowseOptions{Session: f.example, Summarizer: rec}, 100, 30)
			h.keys("up", "up")
			target := h.b.tree.selectedID()
			h.keys("enter")
			h.keys(tc.choice...)
			if tc.focus != "" {
				h.typeText(tc.focus)
				h.keys("enter")
			}
			l, err := jsonl.Read(f.example)
			if err != nil {
				t.Fatal(err)
			}
			leaf := l.Leaf()
			switch {
			case !tc.summary && leaf.ID != target:
				t.Fatalf("leaf %s, want %s", leaf.ID, target)
			case tc.summary && (leaf.Type != "branch_summary" || leaf.ParentID != target):
				t.Fatalf("leaf %s (%s, parent %s), want a branch_summary under %s", leaf.ID, leaf.Type, leaf.ParentID, target)
			}
			if rec.instructions != tc.focus {
				t.Errorf("the summarizer was asked to focus on %q, want %q", rec.instructions, tc.focus)
			}
			if s := h.screen(f); !strings.Contains(s, "the leaf is now "+leaf.ID) || !strings.Contains(s, "› "+leaf.ID) {
				t.Errorf("the tree does not show the new leaf %s:\n%s", leaf.ID, s)
			}
		})
	}
}

// recorder is the mechanical summarizer, remembering the instructions it was
// given (the mechanical summary has no use for them; a model's has).
type recorder struct {
	compaction.Mechanical
	instructions string
}

func (r *recorder) Summarize(ctx context.Context, q compaction.Request) (string, error) {
	r.instructions = q.Instructions
	return r.Mechanical.Summarize(ctx, q)
}

// TestTreeLabel sets and clears a label from the tree.
func TestTreeLabel(t *testing.T) {
	f := newFixture(t)
	h := newHarness(t, BrowseOptions{Session: f.example}, 100, 30)
	h.keys("home")
	id := h.b.tree.selectedID()
	h.keys("shift+l")
	h.typeText("start")
	h.keys("enter")
	l, _ := jsonl.Read(f.example)
	if got := l.Label(id); got != "start" {
		t.Fatalf("label of %s is %q, want start", id, got)
	}
	if !strings.Contains(h.screen(f), "[start] user:") {
		t.Errorf("the tree does not show the label:\n%s", h.screen(f))
	}
	h.keys("shift+l", "ctrl+u") // ctrl+u empties the field
	h.keys("enter")
	l, _ = jsonl.Read(f.example)
	if got := l.Label(id); got != "" {
		t.Fatalf("label of %s is %q after clearing", id, got)
	}
}

// TestPickerRenameDeleteRestore renames, deletes (after asking) and restores
// a session from the picker.
func TestPickerRenameDeleteRestore(t *testing.T) {
	f := newFixture(t)
	h := newHarness(t, BrowseOptions{}, 100, 30)
	h.keys("ctrl+r", "ctrl+u")
	h.typeText("day units")
	h.keys("enter")
	l, _ := jsonl.Read(f.example)
	if l.SessionName() != "day units" {
		t.Fatalf("name %q after rename", l.SessionName())
	}
	if !strings.Contains(h.screen(f), "› day units") {
		t.Errorf("the picker does not show the new name:\n%s", h.screen(f))
	}
	h.keys("ctrl+d", "n")
	if _, err := jsonl.Read(f.example); err != nil {
		t.Fatalf("the session is gone after answering no: %v", err)
	}
	h.keys("ctrl+d", "y")
	if _, err := jsonl.Read(f.example); err == nil {
		t.Fatal("the session is still there after delete")
	}
	trash, _ := h.cat.Trash()
	if len(trash) != 1 || trash[0].Path != f.example {
		t.Fatalf("trash %+v, want the session", trash)
	}
	if s := h.screen(f); strings.Contains(s, "day units") || !strings.Contains(s, "› the fork") {
		t.Errorf("the deleted session is still listed, or its fork is not:\n%s", s)
	}
	h.keys("ctrl+z")
	if _, err := jsonl.Read(f.example); err != nil {
		t.Fatalf("not restored: %v", err)
	}
	if !strings.Contains(h.screen(f), "› day units") {
		t.Errorf("the restored session is not listed:\n%s", h.screen(f))
	}
}

// TestPickerChoose hands the session picked with Enter to the callback.
func TestPickerChoose(t *testing.T) {
	f := newFixture(t)
	st := newStore(catalog.Open(""), nil)
	defer st.cat.Close()
	var got string
	p := newPicker(st, newTheme(true), PickerOptions{Scope: catalog.Scope{Cwd: exampleCwd},
		Choose: func(in catalog.Info) tea.Cmd { got = in.Path; return nil }})
	p.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	cmd := p.Init()
	for _, c := range cmd().(tea.BatchMsg) {
		if msg, ok := c().(listedMsg); ok {
			p.Update(msg)
		}
	}
	p.Update(keyMsg("enter"))
	if got != f.example {
		t.Errorf("chose %q, want %q", got, f.example)
	}
}

// TestBackground picks colours for a light terminal.
func TestBackground(t *testing.T) {
	newFixture(t)
	h := newHarness(t, BrowseOptions{}, 100, 30)
	dark := h.b.View().Content
	h.send(tea.BackgroundColorMsg{Color: lightColor{}})
	light := h.b.View().Content
	if dark == light {
		t.Error("the screen has the same colours on a light background")
	}
}

type lightColor struct{}

func (lightColor) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }

// TestMouseWheel scrolls the tree.
func TestMouseWheel(t *testing.T) {
	f := newFixture(t)
	h := newHarness(t, BrowseOptions{Session: f.pi3}, 80, 8)
	before := h.b.tree.top
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if h.b.tree.top <= before && len(h.b.tree.rows) > h.b.tree.listHeight() {
		t.Errorf("the wheel did not scroll: top %d", h.b.tree.top)
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if h.b.tree.top != before {
		t.Errorf("the wheel up did not scroll back: top %d, want %d", h.b.tree.top, before)
	}
}

// TestEmbeddedTree is the tree as the agent's /tree embeds it: Moved is told
// the new leaf.
func TestEmbeddedTree(t *testing.T) {
	f := newFixture(t)
	var moved string
	tr := NewTree(nil, true, TreeOptions{Path: f.example, Moved: func(leaf, _ string) tea.Cmd { moved = leaf; return nil }})
	tr.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	h := &harness{t: t}
	drive := func(cmd tea.Cmd) {
		for _, msg := range h.collect(cmd) {
			h.runTree(tr, msg)
		}
	}
	drive(tr.Init())
	tr.Update(keyMsg("home"))
	target := tr.selectedID()
	drive(tr.Update(keyMsg("enter")))
	drive(tr.Update(keyMsg("enter"))) // no summary
	if moved != target {
		t.Errorf("Moved was told %q, want %q", moved, target)
	}
	if l, _ := jsonl.Read(f.example); l.Leaf().ID != target {
		t.Errorf("leaf %s, want %s", l.Leaf().ID, target)
	}
}
