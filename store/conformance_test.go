package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/pgtest"
	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// kinds are the stores every conformance case runs against.
var kinds = []struct {
	name string
	open func(t *testing.T) (store.Store, string) // the store and where new sessions go
}{
	{"files", func(t *testing.T) (store.Store, string) {
		home := t.TempDir()
		t.Setenv("ARBOR_DIR", home)
		s := store.OpenFiles(home)
		t.Cleanup(func() { s.Close() })
		return s, filepath.Join(home, "sessions", "p")
	}},
	{"postgres", func(t *testing.T) (store.Store, string) {
		t.Setenv("ARBOR_DIR", t.TempDir())
		s, err := pgstore.Open(pgtest.Shared(t).NewDB(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, ""
	}},
}

const cwd = "/work/project"

var scope = catalog.Scope{Cwd: cwd}

func msg(t *testing.T, role, text string) session.Message {
	t.Helper()
	q, _ := json.Marshal(text)
	var raw string
	switch role {
	case "user":
		raw = fmt.Sprintf(`{"role":"user","content":%s,"timestamp":1700000000000}`, q)
	default:
		raw = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1700000000001}`, q)
	}
	m, err := session.ParseMessage([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// texts is the session's context as role:text lines.
func texts(l *session.Log) []string { return texts2(l.Context()) }

// dump is everything a reopen must give back: every raw line, the tree, the
// cursors and their resolutions, the name and labels, the context.
func dump(l *session.Log) string {
	var b strings.Builder
	fmt.Fprintf(&b, "header %s\n", l.Header().Raw())
	for _, e := range l.Entries() {
		fmt.Fprintf(&b, "%s label=%q\n", e.Raw(), l.Label(e.ID))
	}
	fmt.Fprintf(&b, "name %q active %s\n", l.SessionName(), l.Active())
	for _, c := range l.Cursors() {
		fmt.Fprintf(&b, "cursor %+v\n", c)
		cur := l.Cursor(c.ID)
		fmt.Fprintf(&b, "  resolutions %v leaf %v context %q\n", cur.Resolutions(), leafID(cur.Leaf()), texts2(cur.Context()))
	}
	return b.String()
}

func leafID(e *session.Entry) string {
	if e == nil {
		return "-"
	}
	return e.ID
}

func texts2(c session.Context) []string {
	var out []string
	for _, m := range c.Messages {
		out = append(out, m.Role+":"+string(m.Raw))
	}
	return out
}

// reopen checks that reading and opening the session give back what was written.
func reopen(t *testing.T, st store.Store, ref, want string) {
	t.Helper()
	l, err := st.Read(ref)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if diff := cmp.Diff(want, dump(l)); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}
	s, err := st.Open(ref, store.Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	if diff := cmp.Diff(want, dump(s.Log())); diff != "" {
		t.Errorf("opened (-written +opened):\n%s", diff)
	}
}

// cases is the session conformance suite: what every store must do.
var cases = []struct {
	name string
	run  func(t *testing.T, st store.Store, where string)
}{
	{"appends", func(t *testing.T, st store.Store, where string) {
		for _, d := range []store.Durability{store.Always, store.Turn, store.Never} {
			s := must[store.Session](t)(st.Create(cwd, where, store.Options{Durability: d}))
			l := s.Log()
			must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "hello "+d.String())))
			must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "hi")))
			must[*session.Entry](t)(l.AppendModelChange("anthropic", "claude"))
			must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "more")))
			want := dump(l)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			reopen(t, st, s.Ref(), want)
			// Appending after a reopen continues the same session.
			s2 := must[store.Session](t)(st.Open(s.Ref(), store.Options{Durability: d}))
			e := must[*session.Entry](t)(s2.Log().AppendMessage(msg(t, "assistant", "again")))
			if e.ParentID != l.Leaf().ID {
				t.Errorf("%s: append after reopen has parent %s, want %s", d, e.ParentID, l.Leaf().ID)
			}
			want = dump(s2.Log())
			s2.Close()
			reopen(t, st, s.Ref(), want)
		}
	}},
	{"new session waits for its first user or assistant message", func(t *testing.T, st store.Store, where string) {
		s := must[store.Session](t)(st.Create(cwd, where, store.Options{}))
		must[*session.Entry](t)(s.Log().AppendModelChange("p", "m"))
		if err := s.Close(); !errors.Is(err, jsonl.ErrUnwritten) {
			t.Errorf("Close with a setup entry held back: %v, want ErrUnwritten (no silent loss)", err)
		}
		if _, err := st.Read(s.Ref()); err == nil {
			t.Error("a session with only a setup entry was written")
		}
		s = must[store.Session](t)(st.Create(cwd, where, store.Options{}))
		must[*session.Entry](t)(s.Log().AppendMessage(msg(t, "user", "a question is kept")))
		want := dump(s.Log())
		s.Close()
		reopen(t, st, s.Ref(), want)
		s = must[store.Session](t)(st.Create(cwd, where, store.Options{}))
		must[*session.Entry](t)(s.Log().AppendModelChange("p", "flushed"))
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		want = dump(s.Log())
		s.Close()
		reopen(t, st, s.Ref(), want)
		s = must[store.Session](t)(st.Create(cwd, where, store.Options{Immediate: true}))
		must[*session.Entry](t)(s.Log().AppendModelChange("p", "immediate"))
		want = dump(s.Log())
		s.Close()
		reopen(t, st, s.Ref(), want)
	}},
	{"branches", func(t *testing.T, st store.Store, where string) {
		s := must[store.Session](t)(st.Create(cwd, where, store.Options{}))
		l := s.Log()
		u := must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "q")))
		must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "first answer")))
		if err := l.BranchTo(u.ID); err != nil {
			t.Fatal(err)
		}
		b := must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "second answer")))
		must[*session.Entry](t)(l.BranchWithSummary(u.ID, "tried two answers", nil, false))
		must[*session.Entry](t)(l.SetLabel(b.ID, "keep"))
		if got := len(l.Children(u.ID)); got < 3 {
			t.Errorf("children of the question: %d, want both answers and the summary", got)
		}
		want := dump(l)
		s.Close()
		reopen(t, st, s.Ref(), want)
	}},
	{"cursors and resolutions", func(t *testing.T, st store.Store, where string) {
		s := must[store.Session](t)(st.Create(cwd, where, store.Options{}))
		l := s.Log()
		u := must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "q")))
		a := must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "a")))
		id := must[*session.Cursor](t)(l.NewCursor("side")).ID()
		if err := l.Switch(id); err != nil {
			t.Fatal(err)
		}
		c := l.Cursor(id)
		must[*session.Entry](t)(c.AppendMessage(msg(t, "user", "on the side")))
		if err := c.Pin(u.ID); err != nil {
			t.Fatal(err)
		}
		if err := c.Summarize(a.ID, "short"); err != nil {
			t.Fatal(err)
		}
		if err := c.Rename("renamed side"); err != nil {
			t.Fatal(err)
		}
		must[*session.Entry](t)(l.Cursor("").AppendMessage(msg(t, "user", "on main")))
		want := dump(l)
		s.Close()
		reopen(t, st, s.Ref(), want)
	}},
	{"compaction", func(t *testing.T, st store.Store, where string) {
		s := must[store.Session](t)(st.Create(cwd, where, store.Options{Durability: store.Turn}))
		l := s.Log()
		must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "old question")))
		must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "old answer")))
		keep := must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "kept question")))
		must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "kept answer")))
		must[*session.Entry](t)(l.AppendCompaction(session.CompactionData{Summary: "they talked", FirstKeptEntryID: keep.ID, TokensBefore: 100}))
		must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "after")))
		got := texts(l)
		if len(got) == 0 || !strings.Contains(got[0], "they talked") {
			t.Errorf("context after compaction starts %q, want the summary", got)
		}
		want := dump(l)
		s.Close()
		reopen(t, st, s.Ref(), want)
	}},
	{"names, listing and resolving", func(t *testing.T, st store.Store, where string) {
		var refs []string
		for i := range 3 {
			clock := session.WithClock(func() time.Time { return time.UnixMilli(1700000000000 + int64(i)*1000) })
			s := must[store.Session](t)(st.Create(cwd, where, store.Options{Log: []session.Option{clock}}))
			l := s.Log()
			must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "task "+strconv.Itoa(i))))
			must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "done")))
			must[*session.Entry](t)(l.SetSessionName("Job " + strconv.Itoa(i)))
			refs = append(refs, s.Ref())
			s.Close()
		}
		infos := must[[]catalog.Info](t)(st.List(scope, catalog.ListOptions{}))
		if len(infos) != 3 {
			t.Fatalf("listed %d sessions, want 3", len(infos))
		}
		for _, in := range infos {
			if in.Cwd != cwd || in.MessageCount != 2 || !strings.HasPrefix(in.Name, "Job ") || !strings.HasPrefix(in.FirstMessage, "task ") {
				t.Errorf("listed %+v", in)
			}
		}
		if got := must[[]catalog.Info](t)(st.List(catalog.Scope{Cwd: "/elsewhere"}, catalog.ListOptions{})); len(got) != 0 {
			t.Errorf("another project lists %d sessions", len(got))
		}
		if latest := must[catalog.Info](t)(st.Latest(scope)); latest.Path != refs[2] {
			t.Errorf("latest: %s, want the last one written (%s)", latest.Path, refs[2])
		}
		ref := must[string](t)(st.Resolve("job 1", scope))
		if ref != refs[1] {
			t.Errorf("resolve by name: %s, want %s", ref, refs[1])
		}
		if _, err := st.Resolve("no such thing", scope); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("resolve nothing: %v", err)
		}
		hits := must[[]catalog.Hit](t)(st.Search(scope, must[catalog.Query](t)(catalog.ParseQuery(`"task 2"`)), catalog.SearchOptions{}))
		if len(hits) != 1 || hits[0].Path != refs[2] || hits[0].Role != "user" {
			t.Errorf("phrase search: %+v", hits)
		}
		hits = must[[]catalog.Hit](t)(st.Search(scope, must[catalog.Query](t)(catalog.ParseQuery(`re:task [01]$`)), catalog.SearchOptions{}))
		if len(hits) != 2 {
			t.Errorf("regex search: %+v", hits)
		}
	}},
	{"strings a text column refuses", func(t *testing.T, st store.Store, where string) {
		s := must[store.Session](t)(st.Create(cwd, where, store.Options{}))
		l := s.Log()
		must[*session.Entry](t)(l.AppendMessage(msg(t, "user", "nul \x00 inside, zanzibar")))
		must[*session.Entry](t)(l.AppendMessage(msg(t, "assistant", "ok")))
		must[*session.Entry](t)(l.SetSessionName("name\x00with nul"))
		want := dump(l)
		s.Close()
		reopen(t, st, s.Ref(), want)
		infos := must[[]catalog.Info](t)(st.List(scope, catalog.ListOptions{}))
		if len(infos) != 1 || infos[0].Name != "name\x00with nul" || infos[0].FirstMessage != "nul \x00 inside, zanzibar" {
			t.Errorf("listed %+v", infos)
		}
		hits := must[[]catalog.Hit](t)(st.Search(scope, must[catalog.Query](t)(catalog.ParseQuery("zanzibar")), catalog.SearchOptions{}))
		if len(hits) != 1 {
			t.Errorf("search: %+v", hits)
		}
	}},
	{"archive", func(t *testing.T, st store.Store, where string) {
		s := must[store.Session](t)(st.Create(cwd, where, store.Options{}))
		must[*session.Entry](t)(s.Log().AppendMessage(msg(t, "user", "archived words")))
		must[*session.Entry](t)(s.Log().AppendMessage(msg(t, "assistant", "ok")))
		s.Close()
		if ok, err := st.Unarchive(s.Ref()); ok || err != nil {
			t.Errorf("unarchive a session that is not archived: %v %v", ok, err)
		}
		if err := st.Archive(s.Ref()); err != nil {
			t.Fatal(err)
		}
		q := must[catalog.Query](t)(catalog.ParseQuery("archived"))
		if got := must[[]catalog.Info](t)(st.List(scope, catalog.ListOptions{})); len(got) != 0 {
			t.Errorf("an archived session is listed: %+v", got)
		}
		if got := must[[]catalog.Hit](t)(st.Search(scope, q, catalog.SearchOptions{})); len(got) != 0 {
			t.Errorf("an archived session is searched: %+v", got)
		}
		got := must[[]catalog.Info](t)(st.List(scope, catalog.ListOptions{Archived: true}))
		if len(got) != 1 || !got[0].Archived {
			t.Errorf("listed with archived ones: %+v", got)
		}
		if got := must[[]catalog.Hit](t)(st.Search(scope, q, catalog.SearchOptions{Archived: true})); len(got) != 1 {
			t.Errorf("searched with archived ones: %+v", got)
		}
		if ok, err := st.Unarchive(s.Ref()); !ok || err != nil {
			t.Errorf("unarchive: %v %v", ok, err)
		}
		if got := must[[]catalog.Info](t)(st.List(scope, catalog.ListOptions{})); len(got) != 1 {
			t.Errorf("unarchived session not listed: %+v", got)
		}
	}},
	{"second writer", func(t *testing.T, st store.Store, where string) {
		s := must[store.Session](t)(st.Create(cwd, where, store.Options{Immediate: true}))
		must[*session.Entry](t)(s.Log().AppendMessage(msg(t, "user", "mine")))
		_, err := st.Open(s.Ref(), store.Options{})
		if !errors.Is(err, jsonl.ErrLocked) {
			t.Fatalf("second writer: %v, want it refused", err)
		}
		if !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
			t.Errorf("refusal does not name the holder: %v", err)
		}
		// A reader needs no lock.
		if l, err := st.Read(s.Ref()); err != nil || l.Len() != 1 {
			t.Errorf("read while locked: %v", err)
		}
		s.Close()
		s2, err := st.Open(s.Ref(), store.Options{})
		if err != nil {
			t.Fatalf("open after the first writer closed: %v", err)
		}
		s2.Close()
	}},
}

// TestConformance runs every case against every store.
func TestConformance(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					st, where := k.open(t)
					c.run(t, st, where)
				})
			}
		})
	}
}
