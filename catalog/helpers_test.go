package catalog

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sessionWriter writes pi-style session files for tests.
type sessionWriter struct {
	t    testing.TB
	path string
	id   string
	last string
	n    int
	ts   time.Time
}

func newSession(t testing.TB, dir, id, cwd string) *sessionWriter {
	t.Helper()
	ts := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(dir, strings.NewReplacer(":", "-", ".", "-").Replace(ts.Format("2006-01-02T15:04:05.000Z"))+"_"+id+".jsonl")
	w := &sessionWriter{t: t, path: path, id: id, ts: ts}
	w.line(map[string]any{"type": "session", "version": 3, "id": id, "timestamp": ts.Format("2006-01-02T15:04:05.000Z"), "cwd": cwd})
	return w
}

func (w *sessionWriter) line(v any) {
	w.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		w.t.Fatal(err)
	}
	f, err := os.OpenFile(w.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		w.t.Fatal(err)
	}
}

// entry appends an entry of type typ with the extra fields and returns its id.
func (w *sessionWriter) entry(typ string, fields map[string]any) string {
	w.n++
	id := fmt.Sprintf("%08x", w.n*2654435761%(1<<32))
	m := map[string]any{"type": typ, "id": id, "parentId": nil, "timestamp": w.ts.Add(time.Duration(w.n) * time.Second).Format("2006-01-02T15:04:05.000Z")}
	if w.last != "" {
		m["parentId"] = w.last
	}
	for k, v := range fields {
		m[k] = v
	}
	w.line(m)
	w.last = id
	return id
}

func (w *sessionWriter) user(text string) string {
	return w.entry("message", map[string]any{"message": map[string]any{"role": "user", "content": text, "timestamp": w.ts.Add(time.Duration(w.n+1) * time.Second).UnixMilli()}})
}

func (w *sessionWriter) assistant(text, thinking string, toolArgs map[string]any) string {
	content := []any{}
	if thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": thinking})
	}
	content = append(content, map[string]any{"type": "text", "text": text})
	if toolArgs != nil {
		content = append(content, map[string]any{"type": "toolCall", "id": "call1", "name": "bash", "arguments": toolArgs})
	}
	return w.entry("message", map[string]any{"message": map[string]any{"role": "assistant", "content": content, "api": "x", "provider": "p", "model": "m",
		"stopReason": "stop", "timestamp": w.ts.Add(time.Duration(w.n+1) * time.Second).UnixMilli()}})
}

func (w *sessionWriter) toolResult(text string) string {
	return w.entry("message", map[string]any{"message": map[string]any{"role": "toolResult", "toolCallId": "call1", "toolName": "bash",
		"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false, "timestamp": w.ts.Add(time.Duration(w.n+1) * time.Second).UnixMilli()}})
}

func (w *sessionWriter) name(n string) string {
	return w.entry("session_info", map[string]any{"name": n})
}

// vocabulary for random corpora: ASCII, accents, CJK, punctuation-joined words.
var vocabulary = []string{
	"alpha", "beta", "gamma", "delta", "flock", "deadlock", "torn", "write", "Index", "index", "indexing",
	"main.go", "sync.Mutex", "ünïcödé", "漢字", "テスト", "émoji", "42", "x86_64", "Go", "go", "GO", "rm", "-rf",
	"panic:", "nil", "pointer", "dereference", "résumé", "naïve", "ÄÖÜ", "äöü", "foo/bar", "$HOME", "&&",
}

func randomText(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = vocabulary[r.IntN(len(vocabulary))]
	}
	return strings.Join(ws, " ")
}

// randomCorpus writes n random sessions into dir.
func randomCorpus(t testing.TB, dir string, seed uint64, n int) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range n {
		w := newSession(t, dir, fmt.Sprintf("%08x-0000-7000-8000-%012x", seed, i), fmt.Sprintf("/home/dev/p%d", i%3))
		for range 1 + r.IntN(12) {
			switch r.IntN(4) {
			case 0:
				w.user(randomText(r, 1+r.IntN(8)))
			case 1:
				w.assistant(randomText(r, 1+r.IntN(8)), randomText(r, r.IntN(4)), map[string]any{"command": randomText(r, 2)})
			case 2:
				w.toolResult(randomText(r, 1+r.IntN(20)))
			case 3:
				w.name(randomText(r, 2))
			}
		}
	}
}

// removeOrPurge moves path to the trash of a catalog at home, or deletes it
// for good when purge is set.
func removeOrPurge(home, path string, purge bool) error {
	c := Open(home)
	defer c.Close()
	if purge {
		return c.Purge(path)
	}
	_, err := c.Remove(path)
	return err
}
