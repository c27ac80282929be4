package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/arborlog/arbor/session/jsonl"
)

func TestAppend(t *testing.T) {
	const user = `{"role":"user","content":"hello","timestamp":1764442800000}`
	const assistant = `{"role":"assistant","content":[{"type":"text","text":"hi"}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1764442800001}`

	t.Run("new file is created at once and every id printed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new.jsonl")
		r := runArbor(t, user+"\n\n"+assistant+"\n", "append", path, "--fsync", "always")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		ids := strings.Fields(r.out)
		l, err := jsonl.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 2 || l.Len() != 2 || l.Entry(ids[0]) == nil || l.Entry(ids[1]) == nil || l.Leaf().ID != ids[1] {
			t.Fatalf("printed %q; file has %d entries, leaf %v", ids, l.Len(), l.Leaf())
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", st.Mode().Perm())
		}
	})

	t.Run("a torn last line is ended in place and reported", func(t *testing.T) {
		path := copyFile(t, "../../examples/refactor.jsonl", t.TempDir())
		orig, _ := os.ReadFile(path)
		frag := `{"type":"message","id":"zz`
		if err := os.WriteFile(path, append(orig, frag...), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runArbor(t, user+"\n", "append", path)
		if r.code != 0 || !strings.Contains(r.err, "lacked its newline") || !strings.Contains(r.err, path) {
			t.Fatalf("exit %d, stderr %q: want success and a note that the torn line was ended", r.code, r.err)
		}
		if _, err := os.Stat(path + ".torn"); err == nil {
			t.Fatalf("the fragment was moved to .torn")
		}
		now, _ := os.ReadFile(path)
		if !strings.HasPrefix(string(now), string(orig)+frag+"\n") || strings.Count(string(now), "\n") != strings.Count(string(orig), "\n")+2 {
			t.Fatalf("file is not the original, the fragment on a line of its own and one new line:\n%s", now)
		}
	})

	t.Run("a line that is not a message stops with its number and keeps what came before", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		r := runArbor(t, user+"\n{\"content\":\"no role\"}\n"+user+"\n", "append", path)
		if r.code != 1 || !strings.Contains(r.err, "stdin line 2") || strings.Count(r.err, "\n") != 1 {
			t.Fatalf("exit %d, stderr %q: want exit 1 and one line naming stdin line 2", r.code, r.err)
		}
		l, err := jsonl.Read(path)
		if err != nil || l.Len() != 1 || strings.TrimSpace(r.out) != l.Leaf().ID {
			t.Fatalf("file has %v entries (%v), printed %q: want the first message only", l.Len(), err, r.out)
		}
	})

	t.Run("invalid UTF-8 and unknown roles stop with the line number", func(t *testing.T) {
		for _, tc := range []struct{ line, says string }{
			{"{\"role\":\"user\",\"content\":\"caf\xe9\",\"timestamp\":1}", "not valid UTF-8"},
			{`{"role":"user","content":"a\ud800b","timestamp":1}`, `\ud800 at byte 28 is half a UTF-16 surrogate pair`},
			{`{"role":"user","content":[{"type":"text","text":"\uDC00"}],"timestamp":1}`, `\uDC00 at byte 50 is half`},
			{`{"role":"user","content":"\ud83d\u0041","timestamp":1}`, `\ud83d at byte 27 is half`},
			{`{"role":"user","content":"x","\ud800":1}`, `\ud800 at byte 31 is half`},
			{`{"role":"wizard","content":"x","timestamp":1}`, `unknown role "wizard"`},
			{`{"role":"branchSummary","summary":"x","timestamp":1}`, `unknown role "branchSummary"`},
		} {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			r := runArbor(t, user+"\n"+tc.line+"\n"+user+"\n", "append", path)
			if r.code != 1 || !strings.Contains(r.err, "stdin line 2") || !strings.Contains(r.err, tc.says) || strings.Count(r.err, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q: want exit 1 and one line naming stdin line 2 and saying %q", r.code, r.err, tc.says)
			}
			data, _ := os.ReadFile(path)
			if !utf8.Valid(data) || strings.Count(string(data), "\n") != 2 {
				t.Fatalf("file after a refused line:\n%q", data)
			}
		}
	})

	t.Run("surrogate pairs and escaped backslashes are kept as written", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		line := `{"role":"user","content":"\ud83d\ude00 and \\ud800 as text","timestamp":1}`
		r := runArbor(t, line+"\n", "append", path)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		if data, _ := os.ReadFile(path); !strings.Contains(string(data), line) {
			t.Errorf("the message is not in the file as written:\n%s", data)
		}
	})

	t.Run("a message without a timestamp gets the current time", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		before := time.Now().UnixMilli()
		r := runArbor(t, `{"role":"user","content":"when?"}`+"\n", "append", path)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		l, err := jsonl.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := l.Leaf().Message()
		if err != nil {
			t.Fatal(err)
		}
		d, err := m.Data()
		if err != nil || int64(d.Timestamp) < before || int64(d.Timestamp) > time.Now().UnixMilli() {
			t.Fatalf("timestamp %v (%v), want the time of the append", d.Timestamp, err)
		}
		if !strings.HasPrefix(string(m.Raw()), `{"role":"user","content":"when?","timestamp":`) {
			t.Errorf("message %s: the timestamp should follow the given members", m.Raw())
		}
	})

	t.Run("a second writer is refused at once, naming the holder", func(t *testing.T) {
		path := copyFile(t, "../../examples/refactor.jsonl", t.TempDir())
		s, err := jsonl.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		before, _ := os.ReadFile(path)
		r := runArbor(t, user+"\n", "append", path)
		after, _ := os.ReadFile(path)
		if r.code != 1 || !strings.Contains(r.err, "open for writing by pid") || string(before) != string(after) {
			t.Fatalf("exit %d, stderr %q, file changed %v: want exit 1 naming the holder and no change", r.code, r.err, string(before) != string(after))
		}
	})

	t.Run("an unknown fsync policy is bad usage", func(t *testing.T) {
		r := runArbor(t, "", "append", filepath.Join(t.TempDir(), "s.jsonl"), "--fsync", "sometimes")
		if r.code != 2 {
			t.Fatalf("exit %d, stderr %q: want 2", r.code, r.err)
		}
	})
}

// A session whose replies name no provider or model (arbor append, other
// tools) has no model: the transcript says "model none", not "model /".
func TestContextWithoutModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	in := `{"role":"user","content":"hello","timestamp":1}` + "\n" + `{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":2}` + "\n"
	if r := runArbor(t, in, "append", path); r.code != 0 {
		t.Fatalf("append: %d %s", r.code, r.err)
	}
	r := runArbor(t, "", "context", path)
	if r.code != 0 || !strings.HasSuffix(r.out, "2 messages · thinking off · model none\n") {
		t.Errorf("context: exit %d, %q", r.code, r.out)
	}
}

// TestLoneSurrogateAgreesWithJSONText: append refuses exactly the lines a
// strict JSON decoder finds invalid UTF-8 in, over strings made of lone
// halves, pairs, escaped backslashes and plain escapes.
func TestLoneSurrogateAgreesWithJSONText(t *testing.T) {
	pieces := []string{`\ud800`, `\udc00`, `\ud83d\ude00`, `\\`, `\\ud800`, `a`, `\u0041`, `\uDBFF`, `\uDFFF`, `\"`}
	var walk func(s string, n int)
	walk = func(s string, n int) {
		line := []byte(`{"role":"user","content":"` + s + `"}`)
		_, _, lone := loneSurrogate(line)
		if valid := jsontext.Value(line).IsValid(); lone == valid {
			t.Errorf("%s: lone surrogate %v, but a strict decoder says valid %v", line, lone, valid)
		}
		if n > 0 {
			for _, p := range pieces {
				walk(s+p, n-1)
			}
		}
	}
	walk("", 3)
}
