package pgstore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/session"
)

// cleanSessions copies pi's test sessions that load without damage into a
// folder, and returns it and their paths.
func cleanSessions(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	srcs, _ := filepath.Glob("../testdata/pi/sessions/*.jsonl")
	var paths []string
	for _, src := range srcs {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if l := session.Load(data); !l.Report().Clean() || l.Report().Migrated || l.Len() == 0 || l.ReadOnly() != nil {
			continue
		}
		p := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if len(paths) < 5 {
		t.Fatalf("only %d clean sessions in testdata", len(paths))
	}
	return dir, paths
}

// TestSameRecordsAsFiles pushes pi's sessions into the database and checks
// that listing and searching there return what the file catalog returns.
func TestSameRecordsAsFiles(t *testing.T) {
	t.Setenv("ARBOR_DIR", t.TempDir())
	st, _ := open(t)
	dir, paths := cleanSessions(t)
	for _, p := range paths {
		if _, err := st.PushFile(p); err != nil {
			t.Fatal(err)
		}
	}
	cat := catalog.Open("")
	defer cat.Close()
	norm := func(in []catalog.Info) []catalog.Info {
		out := slices.Clone(in)
		for i := range out {
			// A database has no files: paths and file times are the file store's own.
			out[i].Path, out[i].FileModified = "", time.Time{}
		}
		return out
	}
	for _, o := range []catalog.ListOptions{{}, {Empty: true}} {
		want, err := cat.List(catalog.Scope{Dir: dir}, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.List(catalog.Scope{All: true}, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatal("the file catalog lists nothing")
		}
		t.Logf("list %+v: %d sessions", o, len(got))
		if diff := cmp.Diff(norm(want), norm(got), cmp.Comparer(func(a, b catalog.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("list %+v (-files +postgres):\n%s", o, diff)
		}
	}
	// "t", "fil" and "the fi" end in a word typed in part (a prefix); "the$" is whole.
	for _, q := range []string{"the", "file", `"the file"`, "read*", "t", "fil", "the fi", "the$", "re:[a-z]+\\.go", "re:error", "nothingmatchesthis"} {
		query, err := catalog.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cat.Search(catalog.Scope{Dir: dir}, query, catalog.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Search(catalog.Scope{All: true}, query, catalog.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		key := func(hs []catalog.Hit) []string {
			var out []string
			for _, h := range hs {
				out = append(out, strings.Join([]string{h.SessionID, h.EntryID, h.Role, h.Timestamp, h.Snippet}, "|"))
			}
			slices.Sort(out)
			return out
		}
		if diff := cmp.Diff(key(want), key(got)); diff != "" {
			t.Errorf("search %s (-files +postgres):\n%s", q, diff)
		}
		if (q == "nothingmatchesthis") != (len(got) == 0) {
			t.Errorf("search %s found %d", q, len(got))
		}
		t.Logf("search %s: %d hits", q, len(got))
	}
}

// TestSync pushes files in, checks that a second push copies nothing and that
// a grown file copies only its new entries, then pulls everything into a new
// folder: each file is the original, byte for byte.
func TestSync(t *testing.T) {
	t.Setenv("ARBOR_DIR", t.TempDir())
	st, _ := open(t)
	_, paths := cleanSessions(t)
	total := 0
	for _, p := range paths {
		r, err := st.PushFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Created {
			t.Errorf("%s: first push did not create it", p)
		}
		total += r.Added
	}
	if total == 0 {
		t.Fatal("nothing pushed")
	}
	for _, p := range paths {
		if r, err := st.PushFile(p); err != nil || r.Added != 0 || r.Created {
			t.Errorf("second push of %s: %+v %v", p, r, err)
		}
	}
	// pi appends to one file: a push copies those entries only.
	grown := paths[0]
	l := session.Load(must(os.ReadFile(grown)))
	leaf := l.Entries()[l.Len()-1].ID
	extra := `{"type":"message","id":"pushed01","parentId":"` + leaf + `","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"one more","timestamp":1767225600000}}` + "\n"
	f, _ := os.OpenFile(grown, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(extra)
	f.Close()
	if r, err := st.PushFile(grown); err != nil || r.Added != 1 {
		t.Errorf("push of a grown file: %+v %v", r, err)
	}
	// Pull into an empty folder: every file comes back as it was.
	root := t.TempDir()
	hs, err := st.Sessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, p := range paths {
		byID[session.Load(must(os.ReadFile(p))).Header().ID] = p
	}
	for _, h := range hs {
		dst, err := pgstore.PullPath(root, h)
		if err != nil {
			t.Fatal(err)
		}
		r, err := st.Pull(h.ID, dst)
		if err != nil || !r.Created {
			t.Fatalf("pull %s: %+v %v", h.ID, r, err)
		}
		if got, want := must(os.ReadFile(dst)), must(os.ReadFile(byID[h.ID])); !bytes.Equal(got, want) {
			t.Errorf("pulled %s differs from the file pushed", h.ID)
		}
		// Pulling again changes nothing.
		if r, err := st.Pull(h.ID, dst); err != nil || r.Added != 0 {
			t.Errorf("second pull %s: %+v %v", h.ID, r, err)
		}
	}
	// A file that diverged is refused, and left alone.
	dst, _ := pgstore.PullPath(root, session.Load(must(os.ReadFile(grown))).Header())
	before := must(os.ReadFile(dst))
	f, _ = os.OpenFile(dst, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(strings.Replace(extra, "pushed01", "local001", 1))
	f.Close()
	f, _ = os.OpenFile(grown, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(strings.Replace(extra, "pushed01", "remote01", 1))
	f.Close()
	if _, err := st.PushFile(grown); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pull(session.Load(before).Header().ID, dst); err == nil || !strings.Contains(err.Error(), "lacks") {
		t.Errorf("pull into a diverged file: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
