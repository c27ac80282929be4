package session_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/arborlog/arbor/session"
)

// tb is what the helpers need of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// userMsg and assistantMsg are the messages of pi's test helpers.
func userMsg(t tb, text string) session.Message {
	t.Helper()
	return mustMessage(t, fmt.Sprintf(`{"role":"user","content":%s,"timestamp":1700000000000}`, jsonQuote(text)))
}

func assistantMsg(t tb, text string) session.Message {
	t.Helper()
	return mustMessage(t, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"api":"anthropic-messages","provider":"anthropic","model":"claude-test","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1700000000001}`, jsonQuote(text)))
}

func mustMessage(t tb, raw string) session.Message {
	t.Helper()
	m, err := session.ParseMessage([]byte(raw))
	if err != nil {
		t.Fatalf("ParseMessage(%s): %v", raw, err)
	}
	return m
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// serialize writes the log as a file: the header, then every indexed entry's raw line.
func serialize(l *session.Log) []byte {
	var b bytes.Buffer
	b.Write(l.Header().Raw())
	b.WriteByte('\n')
	for _, e := range l.Entries() {
		b.Write(e.Raw())
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func reopen(l *session.Log) *session.Log { return session.Load(serialize(l)) }

// fileOf builds a session file from a header and entry lines.
func fileOf(lines ...string) []byte {
	return []byte(`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" + strings.Join(lines, "\n") + "\n")
}

// entry lines in the form pi writes them.
func msgLine(id, parent, role, text string) string {
	m := fmt.Sprintf(`{"role":"user","content":%s,"timestamp":1}`, jsonQuote(text))
	if role == "assistant" {
		m = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"provider":"anthropic","model":"claude-test","stopReason":"stop","timestamp":1}`, jsonQuote(text))
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:%02d.000Z","message":%s}`, id, parentJSON(parent), stamp(id), m)
}

func parentJSON(p string) string {
	if p == "" {
		return "null"
	}
	return jsonQuote(p)
}

// stamp gives each id a distinct second, so that tree order follows the ids' order.
func stamp(id string) int {
	n := 0
	for _, c := range id {
		n = n*7 + int(c)
	}
	return n % 60
}

// texts renders a context's messages as role:text, the way a person checks them.
func texts(t tb, ctx session.Context) []string {
	t.Helper()
	var out []string
	for _, m := range ctx.Messages {
		var v struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Summary string          `json:"summary"`
		}
		if err := json.Unmarshal(m.Raw, &v); err != nil {
			t.Fatalf("context message %s: %v", m.Raw, err)
		}
		switch v.Role {
		case "compactionSummary", "branchSummary":
			out = append(out, v.Role+":"+v.Summary)
			continue
		}
		var s string
		if json.Unmarshal(v.Content, &s) != nil {
			var blocks []struct{ Text string }
			_ = json.Unmarshal(v.Content, &blocks)
			for _, b := range blocks {
				s += b.Text
			}
		}
		out = append(out, v.Role+":"+s)
	}
	return out
}

func ids(es []*session.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// contextJSON is the context as `arbor context --json` prints it.
func contextJSON(t tb, ctx session.Context) string {
	t.Helper()
	b, err := ctx.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fixedClock returns a clock that advances one millisecond per call.
func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

func must[T any](t tb) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t tb, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
