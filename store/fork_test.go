package store_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
)

// TestForkBefore forks before the second user message of the active branch:
// the new file loads, ends at that message's parent, names the source, and
// the message's text comes back; the source is untouched.
func TestForkBefore(t *testing.T) {
	home := t.TempDir()
	t.Setenv("ARBOR_DIR", home)
	st := store.OpenFiles(home)
	defer st.Close()
	where := filepath.Join(home, "sessions", "p")
	s := must[store.Session](t)(st.Create(cwd, where, store.Options{}))
	l := s.Log()
	first := must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "first question")))
	answer := must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "an answer")))
	second := must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "second\nquestion")))
	must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "another")))
	ref := s.Ref()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	src := must[*session.Log](t)(st.Read(ref))
	before := dump(src)

	ns, text, err := store.ForkBefore(st, store.ForkFile, ref, src, second.ID, cwd, where)
	if err != nil {
		t.Fatal(err)
	}
	if text != "second\nquestion" {
		t.Errorf("text %q", text)
	}
	newRef := ns.Ref()
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	fl := must[*session.Log](t)(jsonl.Read(newRef))
	if fl.Leaf() == nil || fl.Leaf().ID != answer.ID {
		t.Fatalf("the fork ends at %v, want the parent %s", fl.Leaf(), answer.ID)
	}
	if got := len(fl.Context().Messages); got != 2 {
		t.Errorf("the fork's context holds %d messages, want 2", got)
	}
	abs, _ := filepath.Abs(ref)
	if fl.Header().ParentSession != abs || fl.Header().ID == src.Header().ID {
		t.Errorf("header %+v: want a new id and parentSession %s", fl.Header(), abs)
	}
	if after := dump(must[*session.Log](t)(st.Read(ref))); after != before {
		t.Error("forking changed the source session")
	}

	// Before the first message: an empty session that names its source.
	ns, text, err = store.ForkBefore(st, store.ForkFile, ref, src, first.ID, cwd, where)
	if err != nil {
		t.Fatal(err)
	}
	if text != "first question" || ns.Log().Len() != 0 || ns.Log().Header().ParentSession != ref {
		t.Errorf("fork before the first message: text %q, %d entries, header %+v", text, ns.Log().Len(), ns.Log().Header())
	}
	ns.Close()

	if _, _, err := store.ForkBefore(st, store.ForkFile, ref, src, answer.ID, cwd, where); !errors.Is(err, store.ErrNotUserMessage) {
		t.Errorf("fork before an assistant message: %v", err)
	}
	if _, _, err := store.ForkBefore(st, store.ForkFile, ref, src, "nope", cwd, where); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("fork before an unknown entry: %v", err)
	}
}
