package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// summarizeWith reads path as summarize does with pieces of n bytes (0: the
// default, which reads these small files a chunk at a time).
func summarizeWith(t testing.TB, path string, n int64, prev *state) *state {
	t.Helper()
	if n > 0 {
		defer func(n int64) { pieceBytes = n }(pieceBytes)
		pieceBytes = n
	}
	st, err := summarize(file{path: path, abs: path}, prev)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSummarizeInPieces: a file folded in pieces on every core gives the
// listing, offsets and hashes that folding it a chunk at a time gives, on
// every session file in the repository and on the cases where the order of
// lines decides the outcome.
func TestSummarizeInPieces(t *testing.T) {
	const h = `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}`
	user := func(text string, ts int) string {
		return `{"type":"message","id":"u","parentId":null,"timestamp":"2026-03-01T12:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":` + strings.Repeat("1", ts) + `}}`
	}
	name := func(v string) string { return `{"type":"session_info","name":` + v + `}` }
	long := user(strings.Repeat("x", 5000), 3)
	cases := map[string][]string{
		"renamed, then unnamed":     {h, user("", 1), name(`"one"`), user("a", 2), name(`"two"`), user("b", 4), name(`null`), user("c", 3)},
		"named after unnamed":       {h, name(`null`), user("a", 2), name(`" three "`)},
		"dropped later":             {h, user("a", 5), user("b", 4), "null", user("c", 6), name(`"late"`)},
		"garbage before the header": {"", "  ", "not json", "{", h, user("first", 2), user("second", 3)},
		"white space first":         {"\ufeff \t", h, user("hi", 2)},
		"not a session":             {user("a", 1), h, user("b", 2)},
		"no header at all":          {"x", "y", "z", "w"},
		"unterminated last line":    {h, user("a", 2), user("b", 3) + "\x00"},
		"a long line":               {h, user("", 1), long, user("after", 2), long},
		"only a long line":          {long},
		"blank lines":               {h, "", "", user("a", 2), "", "", "", user("b", 2), ""},
	}
	var paths []string
	dir := t.TempDir()
	for name, lines := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".jsonl")
		text := strings.Join(lines, "\n")
		if !strings.HasSuffix(text, "\x00") {
			text += "\n"
		} else {
			text = strings.TrimSuffix(text, "\x00")
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, root := range []string{corpus, corpus16} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".jsonl") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	if len(paths) < 50 {
		t.Fatalf("only %d files to read", len(paths))
	}
	pieced := 0
	for _, p := range paths {
		want := summarizeWith(t, p, 0, nil)
		for _, n := range []int64{1, 7, 100, 4096} {
			if want.size <= 2*n {
				continue
			}
			pieced++
			if got := summarizeWith(t, p, n, nil); !reflect.DeepEqual(got, want) {
				t.Errorf("%s in pieces of %d bytes:\n got %+v\nwant %+v", p, n, got, want)
			}
		}
	}
	if pieced < 200 {
		t.Errorf("only %d reads went in pieces", pieced)
	}
}

// TestSummarizeInPiecesResumes: a grown file is folded in pieces from where
// the last fold stopped, to the state a chunk at a time gives, and to the
// listing that reading it whole gives.
func TestSummarizeInPiecesResumes(t *testing.T) {
	dir := t.TempDir()
	w := newSession(t, dir, "0195bbbb-0000-7000-8000-000000000002", "/p")
	w.user("hello")
	prev := summarizeWith(t, w.path, 0, nil)
	for i := range 50 {
		w.user(strings.Repeat("grown ", i))
	}
	got := summarizeWith(t, w.path, 64, prev)
	if !got.resumed {
		t.Fatal("the grown file was read from its start")
	}
	if want := summarizeWith(t, w.path, 0, prev); !reflect.DeepEqual(got, want) {
		t.Errorf("resumed in pieces:\n got %+v\nwant %+v", got, want)
	}
	if whole := summarizeWith(t, w.path, 0, nil); got.info != whole.info || got.info.MessageCount != 51 {
		t.Errorf("resumed in pieces, the listing is %+v; read whole, %+v", got.info, whole.info)
	}
}

// FuzzSummarizeInPieces holds folding in pieces to folding a chunk at a time
// on any bytes.
func FuzzSummarizeInPieces(f *testing.F) {
	f.Add([]byte(`{"type":"session","id":"x","timestamp":"2026-01-01T00:00:00.000Z"}`+"\n"+`{"type":"session_info","name":"n"}`+"\n"+`{"type":"message","message":{"role":"user","content":"hi","timestamp":5}}`), uint8(9))
	f.Add([]byte("\n\n{\"type\":\"session\",\"id\":\"x\"}\nnull\n{}"), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		p := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		want := summarizeWith(t, p, 0, nil)
		if got := summarizeWith(t, p, int64(n%64)+1, nil); !reflect.DeepEqual(got, want) {
			t.Errorf("in pieces of %d bytes:\n got %+v\nwant %+v", n%64+1, got, want)
		}
	})
}

// TestResumesAgainOnceTheHeadFills: a file first read when shorter than the
// head that grewFrom checks (headBytes) still resumes after each growth.
func TestResumesAgainOnceTheHeadFills(t *testing.T) {
	for _, n := range []int64{0, 64} {
		w := newSession(t, t.TempDir(), "0195bbbb-0000-7000-8000-000000000003", "/p")
		w.user("hello")
		st := summarizeWith(t, w.path, n, nil)
		for round := range 3 {
			for range 20 {
				w.user(strings.Repeat("grown ", 20))
			}
			st = summarizeWith(t, w.path, n, st)
			if !st.resumed {
				t.Fatalf("pieces of %d: growth %d was read from the start (offset %d)", n, round+1, st.off)
			}
		}
	}
}
