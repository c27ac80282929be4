package compaction

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/google/go-cmp/cmp"
)

func cm(t *testing.T, v map[string]any) session.ContextMessage {
	t.Helper()
	m, err := session.NewMessage(v)
	if err != nil {
		t.Fatal(err)
	}
	return session.ContextMessage{Role: m.Role, Raw: m.Raw()}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		msg  map[string]any
		want int
	}{
		{"user string", map[string]any{"role": "user", "content": "12345678"}, 2},
		{"user rounds up", map[string]any{"role": "user", "content": "123456789"}, 3},
		{"user images count 4800 chars (pi 1.6.0; 0.73.1 ignored them)", map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "abcd"}, map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}}}, 1201},
		{"system: content, sections and tools", map[string]any{"role": "system", "content": "abcd", "sections": map[string]any{"a": "efgh", "b": nil},
			"toolsAdded": []any{map[string]any{"name": "x"}}}, 6}, // 4 + 4 + len(`[{"name":"x"}]`) = 22 chars
		{"user counts UTF-16 units", map[string]any{"role": "user", "content": "🚀🚀"}, 1}, // 4 units
		{"user CJK", map[string]any{"role": "user", "content": "漢字テスト"}, 2},              // 5 units
		{"assistant text thinking and call", map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "abcd"},
			map[string]any{"type": "thinking", "thinking": "efgh"},
			map[string]any{"type": "toolCall", "id": "c1", "name": "read", "arguments": map[string]any{"path": "a.go"}},
		}}, (4 + 4 + 4 + len(`{"path":"a.go"}`) + 3) / 4},
		{"tool result with image", map[string]any{"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": []any{
			map[string]any{"type": "text", "text": "abcd"}, map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}}}, (4 + 4800) / 4},
		{"custom string", map[string]any{"role": "custom", "customType": "x", "content": "abcdefgh", "display": true}, 2},
		{"bash", map[string]any{"role": "bashExecution", "command": "ls", "output": "a b c"}, 2},
		{"compaction summary", map[string]any{"role": "compactionSummary", "summary": strings.Repeat("x", 40), "tokensBefore": 5}, 10},
		{"branch summary", map[string]any{"role": "branchSummary", "summary": "xyz", "fromId": "root"}, 1},
		{"unknown role", map[string]any{"role": "weird", "content": "abcdefgh"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(cm(t, tt.msg)); got != tt.want {
				t.Errorf("EstimateTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

// pi's compaction.test.ts: calculateContextTokens.
func TestContextTokens(t *testing.T) {
	if got := ContextTokens(session.Usage{Input: 1000, Output: 500, CacheRead: 200, CacheWrite: 100}); got != 1800 {
		t.Errorf("sum of parts = %d, want 1800", got)
	}
	if got := ContextTokens(session.Usage{}); got != 0 {
		t.Errorf("zero usage = %d, want 0", got)
	}
	if got := ContextTokens(session.Usage{Input: 10, TotalTokens: 99}); got != 99 {
		t.Errorf("totalTokens wins: %d, want 99", got)
	}
}

// pi's getLastAssistantUsage cases, through EstimateContext.
func TestEstimateContextUsesLastCompletedUsage(t *testing.T) {
	asst := func(total int, stop string) map[string]any {
		return map[string]any{"role": "assistant", "content": []any{}, "usage": usage(total), "stopReason": stop}
	}
	user := map[string]any{"role": "user", "content": strings.Repeat("x", 40)}
	tests := []struct {
		name      string
		msgs      []map[string]any
		want      Estimate
		wantUsage int
	}{
		{"last usage plus trailing", []map[string]any{asst(100, "stop"), asst(200, "stop"), user}, Estimate{Tokens: 210, UsageTokens: 200, TrailingTokens: 10, LastUsageIndex: 1}, 200},
		{"skips aborted and error", []map[string]any{asst(100, "stop"), asst(900, "aborted"), asst(800, "error")}, Estimate{Tokens: 100, UsageTokens: 100, LastUsageIndex: 0}, 100},
		{"no usage: all estimated", []map[string]any{user, user}, Estimate{Tokens: 20, TrailingTokens: 20, LastUsageIndex: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msgs []session.ContextMessage
			for _, m := range tt.msgs {
				msgs = append(msgs, cm(t, m))
			}
			if diff := cmp.Diff(tt.want, EstimateContext(msgs)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// TestEstimateContextPassesOverABadUsage: a usage of another shape, or out of
// range, counts for nothing, and the rest of its reply still counts, as in pi:
// it does not make the message unreadable, wherever it stands in it. Both
// ways of reading a message (a loaded entry's walk, the decoder) agree.
func TestEstimateContextPassesOverABadUsage(t *testing.T) {
	text := `"content":[{"type":"text","text":"` + strings.Repeat("y", 40) + `"}]`
	for _, usage := range []string{`{"input":"3"}`, `{"input":1e999}`, `[1]`, `{"input":1,"input":2}`} {
		lines := []string{
			`{"role":"assistant","content":[],"usage":{"input":100},"stopReason":"stop"}`,
			`{"role":"assistant","usage":` + usage + `,` + text + `,"stopReason":"stop"}`,
			`{"role":"user","content":"` + strings.Repeat("x", 40) + `"}`,
		}
		want := Estimate{Tokens: 120, UsageTokens: 100, TrailingTokens: 20, LastUsageIndex: 0}
		if usage == `{"input":1,"input":2}` { // the decoder takes the last
			want = Estimate{Tokens: 12, UsageTokens: 2, TrailingTokens: 10, LastUsageIndex: 1}
		}
		var decoded []session.ContextMessage
		log := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n"
		parent := "null"
		for i, l := range lines {
			decoded = append(decoded, session.ContextMessage{Role: session.RoleUser, Raw: []byte(l)})
			if i < 2 {
				decoded[i].Role = session.RoleAssistant
			}
			id := fmt.Sprintf(`"e%d"`, i)
			log += `{"type":"message","id":` + id + `,"parentId":` + parent + `,"timestamp":"2026-01-01T00:00:00.000Z","message":` + l + "}\n"
			parent = id
		}
		loaded := session.Load([]byte(log)).Cursor("").Context().Messages
		if len(loaded) != 3 {
			t.Fatalf("usage %s: %d messages loaded", usage, len(loaded))
		}
		for name, msgs := range map[string][]session.ContextMessage{"decoded": decoded, "loaded": loaded} {
			if diff := cmp.Diff(want, EstimateContext(msgs)); diff != "" {
				t.Errorf("usage %s, %s: %s", usage, name, diff)
			}
		}
	}
}

// pi's shouldCompact cases (pi.md §8).
func TestShouldCompact(t *testing.T) {
	s := Settings{Enabled: true, ReserveTokens: 10000, KeepRecentTokens: 20000}
	tests := []struct {
		tokens, window int
		s              Settings
		want           bool
	}{
		{95000, 100000, s, true},
		{89000, 100000, s, false},
		{90000, 100000, s, false}, // strictly more than window − reserve
		{95000, 100000, Settings{ReserveTokens: 10000}, false},
		{200000, 200000, DefaultSettings, true},
	}
	for _, tt := range tests {
		if got := ShouldCompact(tt.tokens, tt.window, tt.s); got != tt.want {
			t.Errorf("ShouldCompact(%d, %d, %+v) = %v, want %v", tt.tokens, tt.window, tt.s, got, tt.want)
		}
	}
	if DefaultSettings != (Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}) {
		t.Errorf("defaults %+v differ from pi's", DefaultSettings)
	}
}

// pi's findCutPoint cases.
func TestFindCutPoint(t *testing.T) {
	t.Run("cuts at a user or assistant message", func(t *testing.T) {
		b := newBuilder(t)
		for i := 0; i < 10; i++ {
			b.user(strings.Repeat("u", 400))
			b.assistant(strings.Repeat("a", 400))
		}
		path := b.l.PathTo("")
		cut := findCutPoint(session.ProjectPath(path).Entries, 0, len(path), 250)
		e := path[cut.firstKept]
		if r := e.Role(); r != session.RoleUser && r != session.RoleAssistant {
			t.Fatalf("cut at a %s", r)
		}
		kept := 0
		for _, x := range path[cut.firstKept:] {
			m, _ := x.AsMessage()
			kept += EstimateTokens(m)
		}
		if kept < 250 {
			t.Errorf("kept %d tokens, want at least 250", kept)
		}
	})
	t.Run("no cut points keeps from the start", func(t *testing.T) {
		b := newBuilder(t)
		c := b.toolCall("read", "a.go")
		b.result(c, "x")
		b.result(c, "y")
		path := b.l.PathTo("")
		if got := findCutPoint(session.ProjectPath(path).Entries, 1, len(path), 1); got.firstKept != 1 || got.splitTurn {
			t.Errorf("got %+v, want first kept 1, no split", got)
		}
	})
	t.Run("everything fits: keep from the first message", func(t *testing.T) {
		b := newBuilder(t)
		b.user("hi")
		b.assistant("hello")
		path := b.l.PathTo("")
		if got := findCutPoint(session.ProjectPath(path).Entries, 0, len(path), 100000); got.firstKept != 0 {
			t.Errorf("got %+v, want 0", got)
		}
	})
	t.Run("split turn starts at its user message", func(t *testing.T) {
		b := newBuilder(t)
		b.user("first")
		b.assistant("reply")
		b.user("do a big thing") // index 2: the turn start
		for i := 0; i < 6; i++ {
			c := b.toolCall("read", "f.go")
			b.assistant(strings.Repeat("t", 200), c)
			b.result(c, strings.Repeat("r", 200))
		}
		path := b.l.PathTo("")
		cut := findCutPoint(session.ProjectPath(path).Entries, 0, len(path), 200)
		if !cut.splitTurn || cut.turnStart != 2 {
			t.Fatalf("got %+v, want a split turn starting at 2", cut)
		}
		if path[cut.firstKept].Role() != session.RoleAssistant {
			t.Errorf("cut at a %s, want an assistant message", path[cut.firstKept].Role())
		}
	})
	t.Run("settings before the cut are kept with it", func(t *testing.T) {
		b := newBuilder(t)
		b.user(strings.Repeat("u", 4000))
		b.assistant("ok")
		if _, err := b.l.AppendThinkingLevelChange("high"); err != nil {
			t.Fatal(err)
		}
		b.user("next")
		b.assistant("done")
		path := b.l.PathTo("")
		cut := findCutPoint(session.ProjectPath(path).Entries, 0, len(path), 2)
		if path[cut.firstKept].Type != session.TypeThinkingLevelChange {
			t.Errorf("cut at %s, want the thinking level change before the kept user message", path[cut.firstKept].Type)
		}
	})
}

// contextOf must be what the session package builds (pi's buildSessionContext)
// on every pi-written file: TokensBefore depends on it.
func TestContextOfEqualsSessionContext(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "pi", "sessions", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "pi", "sessions", "*.jsonl"))
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := session.Load(data)
		leaf := l.Leaf()
		if leaf == nil {
			continue
		}
		want := l.ContextAt(&leaf.ID).Messages
		got := contextOf(l.PathTo(leaf.ID))
		if len(got) != len(want) {
			t.Errorf("%s: %d messages, session builds %d", f, len(got), len(want))
			continue
		}
		for i := range got {
			if string(got[i].Raw) != string(want[i].Raw) {
				t.Errorf("%s: message %d differs:\n got %s\nwant %s", f, i, got[i].Raw, want[i].Raw)
				break
			}
		}
	}
}

// pi's fixture test: a long session gets a valid cut and keeps a long context.
func TestLargeSessionPlan(t *testing.T) {
	l := loadFile(t, filepath.Join("..", "testdata", "pi", "sessions", "big-1mb.jsonl"))
	path := l.PathTo("")
	if len(path) < 100 {
		t.Skipf("big-1mb has %d entries", len(path))
	}
	p, err := Prepare(path, DefaultSettings)
	if err != nil {
		t.Fatal(err)
	}
	if !isCutPoint(p.Projected[p.FirstKeptIndex]) && p.Path[p.FirstKeptIndex].Type == session.TypeMessage {
		t.Errorf("cut at a %s", p.Path[p.FirstKeptIndex].Role())
	}
	if len(l.Context().Messages) <= 100 {
		t.Errorf("context has %d messages, want more than 100", len(l.Context().Messages))
	}
	assertNoOrphans(t, p)
}
