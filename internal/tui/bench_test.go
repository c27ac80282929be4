package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session/jsonl"
)

// manySessions writes n small sessions (a question and an answer each) into
// arbor's folder of one project, and builds the index once, as the first
// `arbor ls` or `arbor browse` would.
func manySessions(b *testing.B, n int) {
	b.Helper()
	root := b.TempDir()
	b.Setenv("ARBOR_DIR", filepath.Join(root, "arbor"))
	b.Setenv("PI_CODING_AGENT_DIR", filepath.Join(root, "pi"))
	dir := jsonl.Dir(filepath.Join(root, "arbor", "sessions"), exampleCwd)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		ts := start.Add(time.Duration(i) * time.Minute).Format("2006-01-02T15:04:05.000Z")
		id := fmt.Sprintf("019b0000-0000-7000-8000-%012d", i)
		var s strings.Builder
		fmt.Fprintf(&s, `{"type":"session","version":3,"id":"%s","timestamp":"%s","cwd":"%s"}`+"\n", id, ts, exampleCwd)
		fmt.Fprintf(&s, `{"type":"message","id":"a%07d","parentId":null,"timestamp":"%s","message":{"role":"user","content":"Session %d: why does the parser reject unit %d?","timestamp":1}}`+"\n", i, ts, i, i)
		fmt.Fprintf(&s, `{"type":"message","id":"b%07d","parentId":"a%07d","timestamp":"%s","message":{"role":"assistant","content":[{"type":"text","text":"Because unit() has no case for it."}],"stopReason":"stop","timestamp":2}}`+"\n", i, i, ts)
		name := strings.ReplaceAll(ts, ":", "-") + "_" + id + ".jsonl"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cat := catalog.Open("")
	if _, err := cat.List(catalog.Scope{Cwd: exampleCwd}, catalog.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	cat.Close()
}

// BenchmarkPickerFirstScreen opens the picker on 10,000 sessions with their
// index in place: from nothing to the first screen with the list drawn.
func BenchmarkPickerFirstScreen(b *testing.B) {
	manySessions(b, 10000)
	for b.Loop() {
		h := newHarness(b, BrowseOptions{}, 120, 40)
		if s := h.b.View().Content; !strings.Contains(s, "(1/10000)") {
			b.Fatalf("the first screen does not list 10,000 sessions:\n%s", s)
		}
		h.cat.Close()
	}
}

// BenchmarkPickerFrame draws one frame of the picker over 10,000 sessions.
func BenchmarkPickerFrame(b *testing.B) {
	manySessions(b, 10000)
	h := newHarness(b, BrowseOptions{}, 120, 40)
	for b.Loop() {
		_ = h.b.View()
	}
}

// BenchmarkPickerKeystroke types one more letter of a search over the titles
// of 10,000 sessions and draws the frame (the full-text search follows in the
// background and is not counted).
func BenchmarkPickerKeystroke(b *testing.B) {
	manySessions(b, 10000)
	h := newHarness(b, BrowseOptions{}, 120, 40)
	for b.Loop() {
		h.b.picker.query.SetValue("unit 99")
		h.b.picker.refilter()
		_ = h.b.View()
	}
}

// bigSession writes a session of n entries: a conversation that branches
// every 500 entries, with tool calls and results, as long agent runs do.
func bigSession(b testing.TB, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "big.jsonl")
	var s strings.Builder
	fmt.Fprintf(&s, `{"type":"session","version":3,"id":"019b0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"%s"}`+"\n", exampleCwd)
	parent := "null"
	for i := range n {
		id := fmt.Sprintf("%08x", i+1)
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z")
		switch i % 4 {
		case 0:
			fmt.Fprintf(&s, `{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"user","content":"step %d: make the test pass","timestamp":1}}`+"\n", id, parent, ts, i)
		case 1:
			fmt.Fprintf(&s, `{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":"read","arguments":{"path":"parse.go"}}],"stopReason":"toolUse","timestamp":2}}`+"\n", id, parent, ts, i)
		case 2:
			fmt.Fprintf(&s, `{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"toolResult","toolCallId":"c%d","toolName":"read","content":[{"type":"text","text":"package timeparse\n\nfunc unit(s string) {}\n"}],"isError":false,"timestamp":3}}`+"\n", id, parent, ts, i-1)
		case 3:
			fmt.Fprintf(&s, `{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"assistant","content":[{"type":"text","text":"unit() has no case for d; adding it."}],"stopReason":"stop","timestamp":4}}`+"\n", id, parent, ts)
		}
		parent = `"` + id + `"`
		if i%500 == 499 { // the next entries branch from 250 entries back
			parent = fmt.Sprintf(`"%08x"`, i-250+1)
		}
	}
	if err := os.WriteFile(path, []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkTreeFirstScreen opens the tree of a 100,000-entry session: read
// the file, reduce the tree with the default filter, lay out the rows and
// draw the first screen.
func BenchmarkTreeFirstScreen(b *testing.B) {
	path := bigSession(b, 100000)
	root := b.TempDir()
	b.Setenv("ARBOR_DIR", root)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	for b.Loop() {
		h := newHarness(b, BrowseOptions{Session: path}, 120, 40)
		if s := h.b.View().Content; !strings.Contains(s, "of 100000 entries") {
			b.Fatalf("the first screen is not the tree:\n%s", s)
		}
		h.cat.Close()
	}
}

// BenchmarkTreeFrame draws one frame of the tree of a 100,000-entry session.
func BenchmarkTreeFrame(b *testing.B) {
	path := bigSession(b, 100000)
	b.Setenv("ARBOR_DIR", b.TempDir())
	h := newHarness(b, BrowseOptions{Session: path}, 120, 40)
	for b.Loop() {
		_ = h.b.View()
	}
}

// BenchmarkTreeMove moves the selection down one row in the 100,000-entry
// tree and draws the frame.
func BenchmarkTreeMove(b *testing.B) {
	path := bigSession(b, 100000)
	b.Setenv("ARBOR_DIR", b.TempDir())
	h := newHarness(b, BrowseOptions{Session: path}, 120, 40)
	down := keyMsg("down")
	for b.Loop() {
		h.b.Update(down)
		_ = h.b.View()
	}
}

var _ tea.Model = (*Browser)(nil)

// longChat is a chat of n turns: a question, a tool call with 30 lines of
// output, and a five-line answer each.
func longChat(b *testing.B, n int) *chatHarness {
	h := newChat(b)
	var items []*item
	out := strings.Repeat("ok  github.com/example/timeparse/internal/unit  0.012s\n", 30)
	for i := range n {
		items = append(items,
			&item{kind: kindUser, text: fmt.Sprintf("Turn %d: why does the parser reject the unit d?", i)},
			&item{kind: kindTool, tool: "bash", args: `{"command":"go test ./..."}`, result: out, hasResult: true},
			&item{kind: kindAssistant, text: strings.Repeat("Because unit() has no case for it, while Units advertises it. ", 8)})
	}
	h.c.items = items
	return h
}

// BenchmarkChatFrame is one frame of a 1,000-turn chat (3,000 blocks): idle
// (the conversation is drawn once and kept), while a reply streams (its last
// Markdown block is drawn again at each delta), and after a resize (every
// block on screen is drawn again, the Markdown renderers made anew).
func BenchmarkChatFrame(b *testing.B) {
	b.Run("idle", func(b *testing.B) {
		h := longChat(b, 1000)
		h.c.View()
		for b.Loop() {
			h.c.View()
		}
	})
	b.Run("streaming", func(b *testing.B) {
		h := longChat(b, 1000)
		h.stream(delta("text_delta", 0, "The unit table"))
		h.c.View()
		i := 0
		for b.Loop() {
			d := " grows"
			if i++; i%40 == 0 {
				d = "\n\nA new paragraph" // a reply's blocks stay a few hundred bytes
			}
			h.c.event(delta("text_delta", 0, d))
			h.c.View()
		}
		h.c.stop()
	})
	b.Run("resize", func(b *testing.B) {
		h := longChat(b, 1000)
		w := 120
		for b.Loop() {
			w = 241 - w // 121, 120, 121…: every frame draws every block again
			h.c.Update(tea.WindowSizeMsg{Width: w, Height: 40})
			h.c.View()
		}
	})
}

// BenchmarkForkOpen opens the fork selector on the 100,000-entry session
// (loaded already, as the chat has it): list the user messages of the active
// branch and draw the first screen.
func BenchmarkForkOpen(b *testing.B) {
	l, err := jsonl.Read(bigSession(b, 100000))
	if err != nil {
		b.Fatal(err)
	}
	var n int
	for b.Loop() {
		f := NewForkSelector(true, ForkOptions{Log: l})
		f.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		_ = f.View()
		n = f.Len()
	}
	b.ReportMetric(float64(n), "messages")
}

// BenchmarkForkKeystroke types one more letter of a filter over those
// messages, and draws the frame.
func BenchmarkForkKeystroke(b *testing.B) {
	l, err := jsonl.Read(bigSession(b, 100000))
	if err != nil {
		b.Fatal(err)
	}
	f := NewForkSelector(true, ForkOptions{Log: l})
	f.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	for b.Loop() {
		f.Update(keyMsg("9"))
		_ = f.View()
		f.Update(keyMsg("backspace"))
	}
}

// BenchmarkRecentPrompts is the chat's background load of the editor's
// history in a folder of 10,000 sessions with their index in place: the
// listing, then the prompts of the newest 20.
func BenchmarkRecentPrompts(b *testing.B) {
	manySessions(b, 10000)
	cat := catalog.Open("")
	defer cat.Close()
	st := newStore(cat, nil)
	b.ResetTimer()
	for b.Loop() {
		if got := st.recentPrompts(catalog.Scope{Cwd: exampleCwd}); len(got) != recentSessions {
			b.Fatalf("%d sessions read, want %d", len(got), recentSessions)
		}
	}
}
