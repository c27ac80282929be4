package compaction

import (
	"bytes"

	"github.com/arborlog/arbor/session"
)

// tb is what the helpers need of *testing.T, *testing.B and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
}

// builder appends messages to an in-memory session, pi style.
type builder struct {
	t    tb
	l    *session.Log
	ts   int64
	call int
}

func newBuilder(t tb) *builder {
	return &builder{t: t, l: session.New("/home/dev/proj"), ts: 1_780_000_000_000}
}

func (b *builder) msg(v map[string]any) *session.Entry {
	b.t.Helper()
	b.ts += 1000
	v["timestamp"] = b.ts
	m, err := session.NewMessage(v)
	if err != nil {
		b.t.Fatal(err)
	}
	e, err := b.l.AppendMessage(m)
	if err != nil {
		b.t.Fatal(err)
	}
	return e
}

func (b *builder) user(text string) *session.Entry {
	return b.msg(map[string]any{"role": "user", "content": text})
}

func usage(total int) map[string]any {
	return map[string]any{"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total,
		"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
}

func (b *builder) assistant(text string, calls ...map[string]any) *session.Entry {
	content := []any{}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	stop := "stop"
	for _, c := range calls {
		content = append(content, c)
		stop = "toolUse"
	}
	return b.msg(map[string]any{"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
		"model": "claude-test", "usage": usage(1), "stopReason": stop})
}

// toolCall returns a new tool call block.
func (b *builder) toolCall(name, path string) map[string]any {
	b.call++
	return map[string]any{"type": "toolCall", "id": "call_" + string(rune('a'+b.call%26)) + itoa(b.call), "name": name,
		"arguments": map[string]any{"path": path}}
}

func (b *builder) result(call map[string]any, text string) *session.Entry {
	return b.msg(map[string]any{"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
		"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false})
}

func itoa(n int) string {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(buf[i:])
		}
	}
}

// contextBytes is the context of a cursor as JSON, for exact comparisons.
func contextBytes(t tb, l *session.Log) []byte {
	t.Helper()
	ctx := l.Context()
	var buf bytes.Buffer
	if err := ctx.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// orphans returns the tool results in a context whose call is not in an
// earlier assistant message of the same context.
func orphans(msgs []session.ContextMessage) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range msgs {
		f := decode(m.Raw)
		switch f.Role {
		case session.RoleAssistant:
			for _, b := range f.Content.Blocks {
				if b.Type == "toolCall" {
					seen[b.ID] = true
				}
			}
		case session.RoleToolResult:
			if !seen[f.ToolCallID] {
				out = append(out, f.ToolCallID)
			}
		}
	}
	return out
}
