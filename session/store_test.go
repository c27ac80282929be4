package session_test

import (
	"errors"
	"testing"

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
	l := session.New("/p")
	st := &fakeStore{}
	l.SetStore(st)
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
	l := session.New("/p")
	st := &fakeStore{}
	l.SetStore(st)
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
