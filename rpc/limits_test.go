package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
)

// chainFile writes a session of n user messages, each the child of the last.
func chainFile(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"deep","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}` + "\n")
	parent := "null"
	for i := range n {
		fmt.Fprintf(&b, `{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-03-01T12:00:00.000Z","message":{"role":"user","content":"m%d","timestamp":1}}`+"\n", i, parent, i)
		parent = fmt.Sprintf(`"e%d"`, i)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "deep.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// serveLines runs Serve on input to its end and returns the lines written
// after ready.
func serveLines(t *testing.T, cfg Config, input string) []string {
	t.Helper()
	var out bytes.Buffer
	if err := Serve(cfg, strings.NewReader(input), nopWriteCloser{&out}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	return lines[1:]
}

// piLines runs Pi on input to its end and returns the lines written.
func piLines(t *testing.T, cfg Config, input string) []string {
	t.Helper()
	var out bytes.Buffer
	if err := Pi(cfg, strings.NewReader(input), &out); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// answers maps the lines of answers by their ids, as JSON ("1", `"a"`).
func answers(lines []string) map[string]string {
	out := map[string]string{}
	for _, l := range lines {
		var r struct{ ID json.RawMessage }
		if json.Unmarshal([]byte(l), &r) == nil {
			out[string(r.ID)] = l
		}
	}
	return out
}

// walk reads a JSON value of any depth token by token (encoding/json's
// Unmarshal stops at 10,000 levels) and returns its top-level fields that
// are not objects or arrays, and how deep it goes.
func walk(t *testing.T, line string) (map[string]any, int) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	top := map[string]any{}
	depth, deepest := 0, 0
	var key string
	expectKey := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not JSON: %v (%.200s)", err, line)
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
				deepest = max(deepest, depth)
			} else {
				depth--
			}
			expectKey = depth == 1
			continue
		default:
			if depth == 1 && expectKey {
				key, expectKey = fmt.Sprint(v), false
				continue
			}
			if depth == 1 {
				top[key] = v
				expectKey = true
			}
		}
	}
	return top, deepest
}

func TestDeepTreeIsAnsweredWithItsID(t *testing.T) {
	const n = 6000
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	cfg.Start = chainFile(t, cfg.Where, n)
	t.Run("serve", func(t *testing.T) {
		lines := serveLines(t, cfg, `{"jsonrpc":"2.0","id":2,"method":"getTree"}`+"\n")
		if len(lines) != 1 {
			t.Fatalf("got %d lines, want 1", len(lines))
		}
		top, depth := walk(t, lines[0])
		if top["id"] != float64(2) || depth < 2*n {
			t.Fatalf("getTree answered %.300s (id %v, %d levels), want id 2 and the %d-entry chain", lines[0], top["id"], depth, n)
		}
		if !strings.Contains(lines[0], `"leafId":"e5999"`) {
			t.Errorf("no leafId e5999 in the answer")
		}
	})
	t.Run("pi", func(t *testing.T) {
		lines := piLines(t, cfg, `{"id":"b","type":"get_tree"}`+"\n")
		if len(lines) != 1 {
			t.Fatalf("got %d lines, want 1", len(lines))
		}
		top, depth := walk(t, lines[0])
		if top["id"] != "b" || top["success"] != true || depth < 2*n {
			t.Fatalf("get_tree answered %.300s (id %v, %d levels), want id b, success and the chain", lines[0], top["id"], depth)
		}
	})
}

func TestOversizedRequestIsAnsweredAndTheNextServed(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	cfg.MaxRequestBytes = 1000
	big := strings.Repeat("x", 5000)
	t.Run("serve", func(t *testing.T) {
		lines := serveLines(t, cfg, `{"jsonrpc":"2.0","method":"setSessionName","params":{"name":"`+big+`"},"id":9}`+"\n"+
			`{"jsonrpc":"2.0","id":10,"method":"getState"}`+"\n")
		if len(lines) != 2 {
			t.Fatalf("got %q, want two answers", lines)
		}
		var r struct {
			ID    any
			Error struct {
				Code int
				Data map[string]any
			}
		}
		a := answers(lines)
		_ = json.Unmarshal([]byte(a["9"]), &r)
		if r.ID != float64(9) || r.Error.Code != -32600 || r.Error.Data["reason"] != "tooLarge" {
			t.Errorf("the long line was answered %s, want error -32600 tooLarge with id 9", a["9"])
		}
		if !strings.Contains(a["10"], `"id":10,"result"`) {
			t.Errorf("the next request was answered %s", a["10"])
		}
	})
	t.Run("pi", func(t *testing.T) {
		lines := piLines(t, cfg, `{"type":"set_session_name","name":"`+big+`","id":"n"}`+"\n"+`{"id":"s","type":"get_state"}`+"\n")
		if len(lines) != 2 || !strings.Contains(lines[0], `"id":"n"`) || !strings.Contains(lines[0], `"command":"set_session_name","success":false`) ||
			!strings.Contains(lines[0], "max-request-bytes") || !strings.Contains(lines[1], `"id":"s"`) {
			t.Errorf("got %q, want set_session_name refused with its id, then get_state answered", lines)
		}
	})
	entries, _ := os.ReadDir(cfg.Where)
	if len(entries) != 0 {
		t.Errorf("files written: %v", entries)
	}
}

func TestLastRequestWithoutNewlineIsAnswered(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	lines := serveLines(t, cfg, `{"jsonrpc":"2.0","id":1,"method":"getState"}`)
	if len(lines) != 1 || !strings.Contains(lines[0], `"id":1,"result"`) {
		t.Errorf("got %q, want getState answered", lines)
	}
}

func TestInvalidUTF8IsRefused(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "unused"})
	cfg := testConfig(t, fake, t.TempDir())
	lines := serveLines(t, cfg, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompt\",\"params\":{\"message\":\"bad \xff byte\"}}\n"+
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"setSessionName\",\"params\":{\"name\":\"n\xc3\"}}\n")
	a := answers(lines)
	if len(lines) != 2 || !strings.Contains(a["3"], `"id":3,"error"`) || !strings.Contains(a["3"], "notUTF8") ||
		!strings.Contains(a["4"], `"id":4,"error"`) {
		t.Errorf("got %q, want both refused as not UTF-8", lines)
	}
	pl := piLines(t, cfg, "{\"id\":\"p\",\"type\":\"prompt\",\"message\":\"bad \xff\"}\n")
	if len(pl) != 1 || !strings.Contains(pl[0], `"id":"p"`) || !strings.Contains(pl[0], "UTF-8") {
		t.Errorf("pi: got %q, want the prompt refused", pl)
	}
	if entries, _ := os.ReadDir(cfg.Where); len(entries) != 0 {
		t.Errorf("files written: %v", entries)
	}
}

func TestNameAloneWritesNoSession(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "hello"})
	cfg := testConfig(t, fake, t.TempDir())
	lines := serveLines(t, cfg, `{"jsonrpc":"2.0","id":1,"method":"setSessionName","params":{"name":"only a name"}}`+"\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"result"`) {
		t.Fatalf("got %q", lines)
	}
	if entries, _ := os.ReadDir(cfg.Where); len(entries) != 0 {
		t.Fatalf("a session of a name alone was written: %v", entries)
	}
	c := startServe(t, cfg)
	result(t, first(c.call("setSessionName", map[string]any{"name": "kept"})))
	result(t, first(c.call("prompt", map[string]any{"message": "hi"})))
	files, _ := filepath.Glob(filepath.Join(cfg.Where, "*", "*.jsonl"))
	files2, _ := filepath.Glob(filepath.Join(cfg.Where, "*.jsonl"))
	files = append(files, files2...)
	if len(files) != 1 {
		t.Fatalf("sessions written: %v", files)
	}
	if b, _ := os.ReadFile(files[0]); !bytes.Contains(b, []byte(`"name":"kept"`)) {
		t.Errorf("the name given before the first prompt is not in the file:\n%s", b)
	}
}

func TestRequestPathsStayInside(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "hello"})
	cfg := testConfig(t, fake, t.TempDir())
	outside := t.TempDir()
	empty := filepath.Join(cfg.Cwd, "empty.jsonl")
	notes := filepath.Join(cfg.Cwd, "notes.txt")
	for p, body := range map[string]string{empty: "", notes: "my notes\n"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	session := chainFile(t, outside, 2)
	cfg.Start = chainFile(t, cfg.Where, 2)
	byID := map[float64]string{}
	for i, req := range []string{
		`"method":"exportHtml","params":{"outputPath":"` + filepath.Join(outside, "page.html") + `"}`,
		`"method":"exportHtml","params":{"outputPath":"../` + filepath.Base(outside) + `/page.html"}`,
		`"method":"resumeSession","params":{"path":"` + empty + `"}`,
		`"method":"resumeSession","params":{"path":"` + notes + `"}`,
		`"method":"resumeSession","params":{"path":"` + session + `"}`,
		`"method":"resumeSession","params":{"path":"/proc/self/environ"}`,
		`"method":"exportHtml","params":{"outputPath":"inside.html"}`,
	} {
		lines := serveLines(t, cfg, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`+"\n", i+2, req))
		byID[float64(i+2)] = lines[0]
	}
	for _, id := range []float64{2, 3, 4, 5, 6, 7} {
		if !strings.Contains(byID[id], `"error":{"code":-32602`) {
			t.Errorf("request %v answered %s, want it refused", id, byID[id])
		}
	}
	if !strings.Contains(byID[8], `"result"`) {
		t.Errorf("an export in the project was answered %s", byID[8])
	}
	if _, err := os.Stat(filepath.Join(cfg.Cwd, "inside.html")); err != nil {
		t.Errorf("the export in the project: %v", err)
	}
	if left, _ := os.ReadDir(outside); len(left) != 1 {
		t.Errorf("written outside: %v", left)
	}
	for p, body := range map[string]string{empty: "", notes: "my notes\n"} {
		if b, _ := os.ReadFile(p); string(b) != body {
			t.Errorf("%s became %q", p, b)
		}
	}
	cfg.Allow = []string{outside}
	lines := serveLines(t, cfg, `{"jsonrpc":"2.0","id":1,"method":"resumeSession","params":{"path":"`+session+`"}}`+"\n")
	if !strings.Contains(lines[0], `"result"`) {
		t.Errorf("with --allow-path the session outside was answered %s", lines[0])
	}
}

// getEntries and get_entries answer with the whole session file (390 MB for
// a million entries): the answer is written an entry at a time, not built
// whole first, so serving it allocates far less than the answer's size more
// than serving a small answer on the same session does.
func TestEntriesAnswerIsNotBuiltWhole(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"big","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}` + "\n")
	// (No character HTML escaping changes: such an entry is copied escaped,
	// one at a time, which counts here though it is not kept.)
	text := strings.Repeat("word é ", 3000)
	parent := "null"
	for i := range 400 {
		fmt.Fprintf(&b, `{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-03-01T12:00:00.000Z","message":{"role":"user","content":%q,"timestamp":1}}`+"\n", i, parent, text)
		parent = fmt.Sprintf(`"e%d"`, i)
	}
	size := uint64(b.Len())
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Start = path
	allocated := func(serve func(io.Reader, io.Writer) error, in string) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var w countWriter
		if err := serve(strings.NewReader(in), &w); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if strings.Contains(in, "ntries") && uint64(w) < size {
			t.Fatalf("the answer is %d bytes, the session %d", w, size)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	serve := func(in io.Reader, out io.Writer) error { return Serve(cfg, in, nopWriter{out}) }
	pi := func(in io.Reader, out io.Writer) error { return Pi(cfg, in, out) }
	for _, c := range []struct {
		name        string
		serve       func(io.Reader, io.Writer) error
		small, full string
	}{
		{"serve", serve, `{"jsonrpc":"2.0","id":1,"method":"getState"}`, `{"jsonrpc":"2.0","id":1,"method":"getEntries"}`},
		{"pi", pi, `{"id":"1","type":"get_state"}`, `{"id":"1","type":"get_entries"}`},
	} {
		small := allocated(c.serve, c.small+"\n")
		full := allocated(c.serve, c.full+"\n")
		if full > small+size/2 {
			t.Errorf("%s: answering with the entries allocated %d bytes more than a small answer, the session is %d", c.name, full-small, size)
		}
	}
}

// countWriter counts what is written to it.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
