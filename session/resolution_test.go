package session

import (
	"errors"
	"testing"
)

func TestResolutionShortcuts(t *testing.T) {
	l := New("/p")
	m, _ := NewMessage(map[string]any{"role": "user", "content": "hi"})
	e, err := l.AppendMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	c := l.Cursor("")
	for _, tc := range []struct {
		do   func() error
		want Resolution
	}{
		{func() error { return c.Pin(e.ID) }, Resolution{Level: Pinned}},
		{func() error { return c.Outline(e.ID, "") }, Resolution{Level: Outlined}},
		{func() error { return c.Summarize(e.ID, "greeting") }, Resolution{Level: Summarized, Text: "greeting"}},
		{func() error { return c.Unpin(e.ID) }, Resolution{Level: Full}},
	} {
		if err := tc.do(); err != nil {
			t.Fatal(err)
		}
		if got, _ := c.Resolution(e.ID); got != tc.want {
			t.Errorf("got %+v, want %+v", got, tc.want)
		}
	}
	// the stamps survive a reload of what was appended
	var file []byte
	file = append(file, l.Header().Raw()...)
	file = append(file, '\n')
	for _, x := range l.Entries() {
		file = append(append(file, x.Raw()...), '\n')
	}
	if got, _ := Load(file).Cursor("").Resolution(e.ID); got.Level != Full {
		t.Errorf("after reload: %+v", got)
	}
	if err := c.Unpin("ffffffff"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Unpin of an unknown id: %v", err)
	}
}
