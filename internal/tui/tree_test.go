package tui

import (
	"runtime"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestTreeSearchKeepsNoRowTexts: typing a search in the tree of a large
// session makes nothing per row, at the first keystroke or the next (the
// browser kept the lower-cased text of every row, 350 MB more on a
// million-entry session, and laid out every row again at each keystroke),
// and still finds what it found.
func TestTreeSearchKeepsNoRowTexts(t *testing.T) {
	const n = 20000
	path := bigSession(t, n)
	t.Setenv("ARBOR_DIR", t.TempDir())
	h := newHarness(t, BrowseOptions{Session: path}, 120, 40)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h.typeText("unit d")
	runtime.ReadMemStats(&after)
	if allocs := after.Mallocs - before.Mallocs; allocs > n/10 {
		t.Errorf("typing a search of %d rows made %d allocations, want fewer than one every ten rows", n, allocs)
	}
	s := ansi.Strip(h.b.View().Content)
	if !strings.Contains(s, "Search: unit d") || !strings.Contains(s, "/5000)") {
		t.Errorf("the search does not find the 5,000 answers that say \"unit() has no case for d\":\n%s", s)
	}
}

// TestTreeOpening: the command hears of each session the tree reads, before
// it reads it (`arbor browse` bounds the heap for a large one), at the first
// load and at each reload.
func TestTreeOpening(t *testing.T) {
	f := newFixture(t)
	var opened []string
	h := newHarness(t, BrowseOptions{Session: f.example, Opening: func(p string) { opened = append(opened, p) }}, 100, 30)
	if len(opened) != 1 || opened[0] != f.example {
		t.Fatalf("opening the tree reported %q, want [%q]", opened, f.example)
	}
	h.keys("ctrl+u")
	if len(opened) != 2 || opened[1] != f.example {
		t.Errorf("another filter read the session again and reported %q, want it twice", opened)
	}
}
