package tui

import (
	"io"
	"testing"
	"time"

	"github.com/arborlog/arbor/catalog"
)

// TestPick runs `arbor -r`'s picker as a real program on keys from a pipe:
// Enter, typed until the listing has arrived, returns the first session listed; Esc returns none.
func TestPick(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, key string
	}{
		{"enter", "\r"},
		{"esc", "\x1b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := catalog.Open("")
			defer cat.Close()
			in, typing := io.Pipe()
			done := make(chan struct{})
			var got string
			var err error
			go func() {
				defer close(done)
				got, err = Pick(BrowseOptions{Catalog: cat, Scope: catalog.Scope{Cwd: exampleCwd}, Input: in, Output: io.Discard,
					Env: []string{"TERM=xterm-256color"}, Now: func() time.Time { return now }})
			}()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for waiting := true; waiting; {
				select {
				case <-done:
					waiting = false
				case <-tick.C:
					typing.Write([]byte(tc.key))
				case <-time.After(20 * time.Second):
					t.Fatal("the picker did not return")
				}
			}
			typing.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if tc.name == "enter" {
				want = f.example // the first row of the threaded sort: its fork hangs below it
			}
			if got != want {
				t.Errorf("Pick returned %q, want %q", got, want)
			}
		})
	}
}
