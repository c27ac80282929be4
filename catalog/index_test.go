package catalog

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fresh lists dir with no index at all: the reference every indexed listing must equal.
func fresh(t *testing.T, dir string) []Info {
	t.Helper()
	c := Open(t.TempDir())
	defer c.Close()
	got, err := c.List(Scope{Dir: dir}, ListOptions{Empty: true})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// readsOf lists with c and reports how many files it read and how many of those it resumed.
func readsOf(t *testing.T, c *Catalog, dir string) ([]Info, int) {
	t.Helper()
	n := 0
	c.Progress = func(done, total int) { n = total }
	got, err := c.List(Scope{Dir: dir}, ListOptions{Empty: true})
	c.Progress = nil
	if err != nil {
		t.Fatal(err)
	}
	return got, n
}

func TestIndexInvalidation(t *testing.T) {
	type step struct {
		name  string
		do    func(t *testing.T, dir string, ws []*sessionWriter)
		reads int // files read again by the listing after the change
	}
	steps := []step{
		{"unchanged", func(*testing.T, string, []*sessionWriter) {}, 0},
		{"append", func(t *testing.T, _ string, ws []*sessionWriter) {
			ws[0].user("a later question")
			ws[0].name("renamed later")
		}, 1},
		{"append torn line", func(t *testing.T, _ string, ws []*sessionWriter) {
			appendBytes(t, ws[1].path, `{"type":"message","id":"ffff0001","parentId":null,"timestamp":"2026-03-09T00:00:00.000Z","message":{"role":"user","content":"half`)
		}, 1},
		{"finish torn line", func(t *testing.T, _ string, ws []*sessionWriter) {
			appendBytes(t, ws[1].path, ` done","timestamp":1800000000000}}`+"\n")
		}, 1},
		{"complete last line without its newline", func(t *testing.T, _ string, ws []*sessionWriter) {
			appendBytes(t, ws[7].path, `{"type":"message","id":"ffff0002","parentId":null,"timestamp":"2026-03-09T00:00:00.000Z","message":{"role":"user","content":"no newline","timestamp":1900000000000}}`)
		}, 1},
		{"truncate", func(t *testing.T, _ string, ws []*sessionWriter) {
			b, _ := os.ReadFile(ws[2].path)
			lines := bytes.SplitAfter(b, []byte("\n"))
			os.WriteFile(ws[2].path, bytes.Join(lines[:2], nil), 0o600)
		}, 1},
		{"replace by rename, same size", func(t *testing.T, dir string, ws []*sessionWriter) {
			b, _ := os.ReadFile(ws[3].path)
			b = bytes.Replace(b, []byte("first words"), []byte("other words"), 1)
			tmp := filepath.Join(dir, "tmp")
			os.WriteFile(tmp, b, 0o600)
			os.Rename(tmp, ws[3].path)
		}, 1},
		{"rewrite in place with more lines", func(t *testing.T, dir string, ws []*sessionWriter) {
			b, _ := os.ReadFile(ws[4].path)
			b = bytes.Replace(b, []byte(`"cwd":"/p"`), []byte(`"cwd":"/q"`), 1)
			b = append(b, b[bytes.IndexByte(b, '\n')+1:]...)
			os.WriteFile(ws[4].path, b, 0o600)
		}, 1},
		{"delete", func(t *testing.T, _ string, ws []*sessionWriter) { os.Remove(ws[5].path) }, 0},
		{"rename file", func(t *testing.T, dir string, ws []*sessionWriter) {
			os.Rename(ws[6].path, filepath.Join(dir, "renamed.jsonl"))
		}, 1},
		{"new file", func(t *testing.T, dir string, ws []*sessionWriter) {
			w := newSession(t, dir, "0195aaaa-0000-7000-8000-00000000000f", "/p")
			w.user("brand new")
		}, 1},
	}
	dir := t.TempDir()
	var ws []*sessionWriter
	for i := range 8 {
		w := newSession(t, dir, "0195aaaa-0000-7000-8000-00000000000"+strconv.Itoa(i), "/p")
		w.user("first words of session " + strconv.Itoa(i))
		w.assistant("an answer", "some thought", nil)
		ws = append(ws, w)
	}
	home := t.TempDir()
	c := Open(home)
	defer c.Close()
	if _, n := readsOf(t, c, dir); n != len(ws) {
		t.Fatalf("first listing read %d files, want %d", n, len(ws))
	}
	for _, s := range steps {
		// Modification times have a granularity; make sure a change is a change.
		time.Sleep(10 * time.Millisecond)
		s.do(t, dir, ws)
		got, n := readsOf(t, c, dir)
		if diff := cmp.Diff(fresh(t, dir), got); diff != "" {
			t.Errorf("%s: indexed listing differs from a fresh one (-fresh +indexed):\n%s", s.name, diff)
		}
		if n != s.reads {
			t.Errorf("%s: read %d files, want %d", s.name, n, s.reads)
		}
		// The text index follows: the same hits as scanning the files.
		for _, word := range []string{"words", "first", "question", "half", "answer"} {
			q, _ := ParseQuery(word)
			got, err := c.Search(Scope{Dir: dir}, q, SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			es, _ := c.scan(Scope{Dir: dir}, true)
			want, _ := c.searchFiles(es, q, SearchOptions{})
			key := func(h Hit) string { return h.Path + " " + h.EntryID + " " + h.Snippet }
			if diff := cmp.Diff(sortedKeys(want, key), sortedKeys(got, key)); diff != "" {
				t.Errorf("%s: search %q differs from a scan of the files (-scan +index):\n%s", s.name, word, diff)
			}
		}
		// A second process (a new catalog on the same index) sees the same.
		c2 := Open(home)
		got2, n2 := readsOf(t, c2, dir)
		c2.Close()
		if n2 != 0 || !cmp.Equal(got, got2) {
			t.Errorf("%s: reopened index read %d files / listing differs", s.name, n2)
		}
	}
}

func appendBytes(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestAppendResumes checks that a grown file is read from where the index stopped.
func TestAppendResumes(t *testing.T) {
	dir := t.TempDir()
	w := newSession(t, dir, "0195bbbb-0000-7000-8000-000000000001", "/p")
	w.user("hello")
	f := file{path: w.path, abs: w.path}
	stat := func() {
		info, err := os.Stat(w.path)
		if err != nil {
			t.Fatal(err)
		}
		f.size, f.mtime, f.ino = info.Size(), info.ModTime(), inode(info)
	}
	stat()
	st1, err := summarize(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.user("again")
	stat()
	st2, err := summarize(f, st1)
	if err != nil {
		t.Fatal(err)
	}
	if !st2.resumed || st2.info.MessageCount != 2 {
		t.Errorf("after an append: resumed %v, %d messages; want resumed, 2", st2.resumed, st2.info.MessageCount)
	}
	// Same length, different bytes in the last folded line: read from the start.
	b, _ := os.ReadFile(w.path)
	b = bytes.Replace(b, []byte("again"), []byte("AGAIN"), 1)
	b = append(b, []byte(`{"type":"label","id":"x","parentId":null,"timestamp":"2026-03-01T12:00:00.000Z"}`+"\n")...)
	os.WriteFile(w.path, b, 0o600)
	stat()
	st3, err := summarize(f, st2)
	if err != nil {
		t.Fatal(err)
	}
	if st3.resumed {
		t.Error("a file whose last indexed line changed was resumed instead of read again")
	}
}

// TestDamagedIndexRebuilt replaces the index with garbage: listing still works
// and the index is rebuilt.
func TestDamagedIndexRebuilt(t *testing.T) {
	dir := t.TempDir()
	randomCorpus(t, dir, 1, 5)
	home := t.TempDir()
	want := fresh(t, dir)
	for _, garbage := range [][]byte{[]byte("not a database at all, just words"), bytes.Repeat([]byte{0}, 8192)} {
		os.WriteFile(IndexPath(home), garbage, 0o600)
		c := Open(home)
		got, n := readsOf(t, c, dir)
		c.Close()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("listing over a damaged index differs:\n%s", diff)
		}
		if n != 5 {
			t.Errorf("read %d files over a damaged index, want 5", n)
		}
		c = Open(home)
		_, n = readsOf(t, c, dir)
		c.Close()
		if n != 0 {
			t.Errorf("the index was not rebuilt: the next listing read %d files", n)
		}
	}
}

// TestHelperProcess is not a test: the concurrency test runs the test binary
// as separate arbor processes through it.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("CATALOG_HELPER")
	if mode == "" {
		t.Skip("helper process only")
	}
	dir, home := os.Getenv("CATALOG_DIR"), os.Getenv("CATALOG_HOME")
	switch mode {
	case "list":
		for range 30 {
			c := Open(home)
			got, err := c.List(Scope{Dir: dir}, ListOptions{Empty: true})
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range got {
				if in.ID == "" || in.MessageCount < 1 {
					t.Fatalf("bad record %+v", in)
				}
			}
			q, _ := ParseQuery("growing")
			c = Open(home)
			_, err = c.Search(Scope{Dir: dir}, q, SearchOptions{})
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	case "append":
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for i := range 200 {
			f := files[i%len(files)]
			line, _ := json.Marshal(map[string]any{"type": "message", "id": strconv.Itoa(100000 + i), "parentId": nil, "timestamp": "2026-03-02T00:00:00.000Z",
				"message": map[string]any{"role": "user", "content": "growing line " + strconv.Itoa(i), "timestamp": 1780000000000 + i}})
			appendBytes(t, f, string(line)+"\n")
		}
	}
}

// TestConcurrentProcesses runs two listing processes while a third appends to
// the sessions; afterwards the index must agree with a fresh listing.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir, home := t.TempDir(), t.TempDir()
	randomCorpus(t, dir, 7, 10)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	outs := make([][]byte, 3)
	for i, mode := range []string{"list", "list", "append"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
			cmd.Env = append(os.Environ(), "CATALOG_HELPER="+mode, "CATALOG_DIR="+dir, "CATALOG_HOME="+home)
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
	}
	c := Open(home)
	got, n := readsOf(t, c, dir)
	if diff := cmp.Diff(fresh(t, dir), got); diff != "" {
		t.Errorf("index after concurrent use differs from a fresh listing:\n%s", diff)
	}
	_ = n
	// The text index holds each appended line exactly once.
	q, _ := ParseQuery("growing")
	hits, err := c.Search(Scope{Dir: dir}, q, SearchOptions{})
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 200 {
		t.Errorf("search found %d appended lines, want 200", len(hits))
	}
}

func sortedKeys(hs []Hit, key func(Hit) string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = key(h)
	}
	slices.Sort(out)
	return out
}

// TestUnterminatedLastLine: pi parses a last line that lacks its newline, so it
// counts; the line is not part of the fold the index resumes from.
func TestUnterminatedLastLine(t *testing.T) {
	dir := t.TempDir()
	w := newSession(t, dir, "0195bbbb-0000-7000-8000-000000000002", "/p")
	w.user("one")
	w.user("two")
	appendBytes(t, w.path, `{"type":"message","id":"x3","parentId":null,"timestamp":"2026-03-09T00:00:00.000Z","message":{"role":"user","content":"three","timestamp":1900000000000}}`)
	c := Open(t.TempDir())
	defer c.Close()
	for range 2 { // cold, then from the index
		got, err := c.List(Scope{Dir: dir}, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].MessageCount != 3 || got[0].FirstMessage != "one" || got[0].Modified.String() != "2030-03-17T17:46:40.000Z" {
			t.Fatalf("listing %+v; want 3 messages, first \"one\", modified by the last line", got)
		}
	}
	appendBytes(t, w.path, "\n")
	w.user("four")
	got, _ := c.List(Scope{Dir: dir}, ListOptions{})
	if got[0].MessageCount != 4 {
		t.Errorf("after the line was finished and another appended: %d messages, want 4", got[0].MessageCount)
	}
}
