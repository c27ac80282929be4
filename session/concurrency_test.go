package session_test

import (
	"sync"
	"testing"

	"github.com/arborlog/arbor/session"
)

// TestConcurrentCursors: cursors used from several goroutines at once (run
// under -race) each keep a linear branch of their own appends.
func TestConcurrentCursors(t *testing.T) {
	l := session.New("/p")
	root := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "root")))
	const workers, appends = 4, 50
	cursors := make([]string, workers)
	for i := range cursors {
		idC, err := l.NewCursor("")
		check(t, err)
		id := idC.ID()
		cursors[i] = id
	}
	var wg sync.WaitGroup
	for _, id := range cursors {
		wg.Go(func() {
			c := l.Cursor(id)
			for range appends {
				if _, err := c.AppendMessage(assistantMsg(t, id)); err != nil {
					t.Error(err)
					return
				}
				_ = c.Context()
				_ = l.Tree()
				_ = l.Cursors()
			}
		})
	}
	wg.Wait()
	r := reopen(l)
	for _, id := range cursors {
		b := r.Cursor(id).Context()
		if len(b.Messages) != appends+1 {
			t.Errorf("cursor %s: %d messages, want %d", id, len(b.Messages), appends+1)
		}
		for _, m := range b.Messages[1:] {
			if m.Entry.Cursor != id {
				t.Errorf("cursor %s's branch holds entry %s of cursor %q", id, m.Entry.ID, m.Entry.Cursor)
			}
		}
		if path := r.Cursor(id).Leaf(); path == nil || r.PathTo(path.ID)[0].ID != root.ID {
			t.Errorf("cursor %s does not descend from the root", id)
		}
	}
}
