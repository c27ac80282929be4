package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	arbor "github.com/arborlog/arbor/store"
	"github.com/charmbracelet/x/ansi"
)

// forkDriver runs a fork selector alone, recording what it chose.
type forkDriver struct {
	f         *ForkSelector
	chosen    *session.Entry
	text      string
	cancelled bool
}

func newForkDriver(t *testing.T, path string, w, h int) *forkDriver {
	t.Helper()
	l, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	d := &forkDriver{}
	d.f = NewForkSelector(true, ForkOptions{Log: l, Now: func() time.Time { return now },
		Choose: func(e *session.Entry, text string) tea.Cmd { d.chosen, d.text = e, text; return nil },
		Cancel: func() tea.Cmd { d.cancelled = true; return nil }})
	d.f.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

func (d *forkDriver) keys(keys ...string) {
	for _, k := range keys {
		d.f.Update(keyMsg(k))
	}
}

func (d *forkDriver) typeText(s string) {
	for _, r := range s {
		d.f.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (d *forkDriver) screen() string { return ansi.Strip(d.f.View()) }

// TestForkScreens draws the fork selector on examples/refactor.jsonl.
func TestForkScreens(t *testing.T) {
	f := newFixture(t)
	for _, s := range []struct {
		name string
		w, h int
		do   func(d *forkDriver)
	}{
		{"newest", 100, 12, func(d *forkDriver) {}},
		{"moved", 100, 12, func(d *forkDriver) { d.keys("up", "up") }},
		{"filtered", 100, 12, func(d *forkDriver) { d.typeText("test") }},
		{"no-match", 100, 12, func(d *forkDriver) { d.typeText("zebra") }},
		{"narrow", 40, 6, func(d *forkDriver) { d.keys("home") }},
	} {
		t.Run(s.name, func(t *testing.T) {
			d := newForkDriver(t, f.example, s.w, s.h)
			s.do(d)
			got := d.screen()
			golden(t, "fork-"+s.name, got)
			for _, ln := range strings.Split(got, "\n") {
				if w := lipWidth(ln); w != s.w {
					t.Errorf("a row is %d columns, want %d: %q", w, s.w, ln)
				}
			}
		})
	}
}

// TestForkEmpty is the selector on a session with no user message yet.
func TestForkEmpty(t *testing.T) {
	d := &forkDriver{}
	d.f = NewForkSelector(true, ForkOptions{Log: session.New("/tmp")})
	d.f.Update(tea.WindowSizeMsg{Width: 80, Height: 6})
	golden(t, "fork-empty", d.screen())
	d.keys("enter")
	if _, ok := d.f.Selected(); ok {
		t.Error("a selection in an empty list")
	}
}

// TestForkChoose picks a message with the keys, forks before it as the chat
// does, and checks the new file: it loads, ends at the message's parent and
// names the source, and the text for the editor is the message's.
func TestForkChoose(t *testing.T) {
	f := newFixture(t)
	d := newForkDriver(t, f.example, 100, 12)
	d.typeText("test")
	d.keys("esc") // clears the filter, keeps the selector open
	if d.cancelled {
		t.Fatal("esc with a filter cancelled the selector")
	}
	d.keys("up", "enter")
	if d.chosen == nil {
		t.Fatal("enter chose nothing")
	}
	src, _ := jsonl.Read(f.example)
	var users []*session.Entry
	for _, e := range src.PathTo("") {
		if e.Role() == session.RoleUser {
			users = append(users, e)
		}
	}
	if want := users[len(users)-2]; d.chosen.ID != want.ID {
		t.Fatalf("chose %s, want the second newest user message %s", d.chosen.ID, want.ID)
	}
	if d.text != arbor.MessageText(d.chosen) || d.text == "" {
		t.Errorf("text %q", d.text)
	}
	st := arbor.OpenFiles("")
	defer st.Close()
	ns, text, err := arbor.ForkBefore(st, arbor.ForkFile, f.example, src, d.chosen.ID, exampleCwd, "")
	if err != nil {
		t.Fatal(err)
	}
	path := ns.Ref()
	ns.Close()
	fl, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if text != d.text || fl.Leaf().ID != d.chosen.ParentID || fl.Header().ParentSession != f.example {
		t.Errorf("fork %s: leaf %s (want %s), parent %q, text %q", path, fl.Leaf().ID, d.chosen.ParentID, fl.Header().ParentSession, text)
	}
	d.keys("esc")
	if !d.cancelled {
		t.Error("esc with an empty filter did not cancel")
	}
}
