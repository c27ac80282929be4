package importers

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

func contextJSON(t *testing.T, l *session.Log) string {
	t.Helper()
	b, err := json.Marshal(l.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func entryIDs(l *session.Log) []string {
	var ids []string
	for _, e := range l.Entries() {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestWriteTwiceChangesNothing: a second import of the same source leaves the
// file byte for byte as the first wrote it.
func TestWriteTwiceChangesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, f := range fixtures(t) {
		s := mustRead(t, f)
		w1, err := Write(s, dir)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(w1.Path)
		if !w1.Created || w1.Added+w1.Pending != len(s.Lines) || w1.Pending != len(s.open) {
			t.Fatalf("%s: first import %+v", f, w1)
		}
		w2, err := Write(mustRead(t, f), dir)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(w2.Path)
		if w2.Created || w2.Added != 0 || w2.Existing != w1.Added || w2.Path != w1.Path || !bytes.Equal(before, after) {
			t.Errorf("%s: second import %+v changed the file", f, w2)
		}
	}
}

// TestWriteBringsAGrownSourceUpToDate: a source imported while it was shorter
// and again once it grew ends with the entries and context of a fresh import,
// by appending only; what was there is untouched.
func TestWriteBringsAGrownSourceUpToDate(t *testing.T) {
	for _, f := range fixtures(t) {
		data, _ := os.ReadFile(f)
		ls := bytes.SplitAfter(data, []byte("\n"))
		if len(ls) < 4 {
			continue
		}
		t.Run(f, func(t *testing.T) {
			tmp := t.TempDir()
			src := filepath.Join(tmp, filepath.Base(f))
			format := mustRead(t, f).Header.From.Format
			out := filepath.Join(tmp, "out")
			var first []byte
			for _, cut := range []int{len(ls) / 3, 2 * len(ls) / 3, len(ls)} {
				if err := os.WriteFile(src, bytes.Join(ls[:cut], nil), 0o600); err != nil {
					t.Fatal(err)
				}
				s, err := Read(Format(format), Input{Path: src, Data: bytes.Join(ls[:cut], nil)})
				if err != nil {
					t.Fatal(err)
				}
				// The session's time comes from the source; a short prefix may not have it yet.
				if first == nil {
					s.Header.Timestamp = mustRead(t, f).Header.Timestamp
				}
				w, err := Write(s, out)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(w.Path)
				if first != nil && !bytes.HasPrefix(got, first) {
					t.Fatalf("the update rewrote what was there")
				}
				first = got
			}
			fresh, err := Read(Format(format), Input{Path: src, Data: data})
			if err != nil {
				t.Fatal(err)
			}
			fw, err := Write(fresh, filepath.Join(tmp, "fresh"))
			if err != nil {
				t.Fatal(err)
			}
			freshData, _ := os.ReadFile(fw.Path)
			got, want := session.Load(first), session.Load(freshData)
			if diff := cmp.Diff(entryIDs(want), entryIDs(got)); diff != "" {
				t.Errorf("entries differ from a fresh import (-fresh +updated):\n%s", diff)
			}
			if !got.Report().Clean() {
				t.Errorf("the updated file has damage: %+v", got.Report())
			}
			checkToolResults(t, f, got)
			if a, b := contextJSON(t, want), contextJSON(t, got); a != b {
				t.Errorf("context differs from a fresh import:\nfresh   %.300s\nupdated %.300s", a, b)
			}
		})
	}
}

// TestWriteRefusesAForeignFile: a file of the same name that is another session
// is not appended to.
func TestWriteRefusesAForeignFile(t *testing.T) {
	dir := t.TempDir()
	s := mustRead(t, "testdata/claude/compact-preserved/s2.jsonl")
	w, err := Write(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.Path, []byte(`{"type":"session","version":3,"id":"someone-else","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(s, dir); err == nil {
		t.Fatal("appended to another session's file")
	}
}

// TestWriteWaitsForNoWriter: while an agent has the imported session open,
// bringing it up to date fails, naming the lock, and changes nothing.
func TestWriteWaitsForNoWriter(t *testing.T) {
	dir := t.TempDir()
	data, _ := os.ReadFile("testdata/claude/compact-preserved/s2.jsonl")
	lines := bytes.SplitAfter(data, []byte("\n"))
	src := filepath.Join(dir, "s2.jsonl")
	short, err := Read(Claude, Input{Path: src, Data: bytes.Join(lines[:6], nil)})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Write(short, filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	held, err := jsonl.Open(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	before, _ := os.ReadFile(w.Path)
	full, _ := Read(Claude, Input{Path: src, Data: data})
	var le *jsonl.LockError
	if _, err := Write(full, filepath.Join(dir, "out")); !errors.As(err, &le) {
		t.Fatalf("import into a file a writer holds: %v", err)
	}
	if after, _ := os.ReadFile(w.Path); !bytes.Equal(before, after) {
		t.Error("the held file changed")
	}
}
