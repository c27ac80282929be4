package session_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

// fakeStore hands out entries "another program" appended, and fails writes on demand.
type fakeStore struct {
	external []*session.Entry
	fail     error
	written  []string
}

func (s *fakeStore) Refresh() ([]*session.Entry, error) {
	ext := s.external
	s.external = nil
	return ext, nil
}

func (s *fakeStore) Write(e *session.Entry) error {
	if s.fail != nil {
		return s.fail
	}
	s.written = append(s.written, e.ID)
	return nil
}

func TestStoreFailureLeavesLogUnchanged(t *testing.T) {
	st := &fakeStore{}
	l := session.New("/p", session.WithStore(st))
	a := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "a")))
	boom := errors.New("disk full")
	st.fail = boom
	before := contextJSON(t, l.Context())
	cursors := l.Cursors()
	for name, f := range map[string]func() error{
		"message":  func() error { _, err := l.AppendMessage(userMsg(t, "b")); return err },
		"label":    func() error { _, err := l.SetLabel(a.ID, "x"); return err },
		"branchTo": func() error { return l.BranchTo(a.ID) },
		"clear":    func() error { return l.ResetLeaf() },
		"fork":     func() error { _, err := l.NewCursor("f"); return err },
		"name":     func() error { _, err := l.SetSessionName("n"); return err },
	} {
		if err := f(); !errors.Is(err, boom) {
			t.Errorf("%s: err %v, want the store's", name, err)
		}
	}
	if l.Len() != 1 || contextJSON(t, l.Context()) != before || l.Label(a.ID) != "" || l.SessionName() != "" {
		t.Errorf("a failed write changed the log: %d entries, context %s", l.Len(), contextJSON(t, l.Context()))
	}
	if diff := cmp.Diff(cursors, l.Cursors()); diff != "" {
		t.Errorf("a failed fork left a cursor: %s", diff)
	}
	if diff := cmp.Diff([]string{a.ID}, st.written); diff != "" {
		t.Errorf("written: %s", diff)
	}
}

func TestStoreRefreshIndexesExternalAppends(t *testing.T) {
	st := &fakeStore{}
	l := session.New("/p", session.WithStore(st))
	a := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "a")))
	// pi appends two entries to the file while arbor has it open.
	ext := session.ParseEntries([]byte(msgLine("e1", a.ID, "assistant", "from pi") + "\n" + msgLine("e2", "e1", "user", "more") + "\n"))
	st.external = ext
	b := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "b")))
	if b.ParentID != "e2" {
		t.Errorf("append after external entries has parent %s, want e2", b.ParentID)
	}
	if diff := cmp.Diff([]string{"user:a", "assistant:from pi", "user:more", "assistant:b"}, texts(t, l.Context())); diff != "" {
		t.Error(diff)
	}
}

// TestOptionsAtConstruction: a log's store, clock and read-only state are
// given when it is made, and a loaded log keeps them.
func TestOptionsAtConstruction(t *testing.T) {
	st := &fakeStore{}
	at := time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)
	clock := session.WithClock(func() time.Time { return at })
	v4 := []byte(`{"type":"session","version":4,"id":"v4","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" + msgLine("a", "", "user", "A") + "\n")

	l := session.Load(fileOf(msgLine("a", "", "user", "A")), session.WithStore(st), clock)
	e, err := l.AppendMessage(userMsg(t, "B"))
	check(t, err)
	if e.Timestamp != "2026-03-04T05:06:07.008Z" || len(st.written) != 1 || st.written[0] != e.ID {
		t.Errorf("append at %s, store wrote %v: want the given clock's time, written through the given store", e.Timestamp, st.written)
	}

	ro := session.Load(v4, session.WithSource("/s/new.jsonl"), session.WithStore(st))
	if _, err := ro.AppendMessage(userMsg(t, "C")); !errors.Is(err, session.ErrReadOnly) || !strings.HasPrefix(err.Error(), "/s/new.jsonl: ") {
		t.Errorf("append to a version 4 file: %v, want ErrReadOnly starting with the source", err)
	}
	if len(st.written) != 1 {
		t.Errorf("the read-only log wrote through its store: %v", st.written)
	}
	foreign := errors.New("read in place")
	if _, err := session.New("/p", session.WithReadOnly(foreign)).SetSessionName("x"); !errors.Is(err, foreign) {
		t.Errorf("WithReadOnly: append gave %v", err)
	}

	// A header-less file gets a current-version header for WithCwd's folder,
	// the same id on every load.
	data := []byte(msgLine("a", "", "user", "A") + "\n")
	h1 := session.Load(data, session.WithCwd("/work")).Header()
	h2 := session.Load(data, session.WithCwd("/work")).Header()
	if h1.Cwd != "/work" || h1.Version != session.CurrentVersion || h1.ID != h2.ID ||
		!strings.Contains(string(h1.Raw()), `"cwd":"/work"`) {
		t.Errorf("made-up header %+v (%s), then id %s", h1, h1.Raw(), h2.ID)
	}
}
