package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/charmbracelet/x/ansi"
)

// chatHarness drives a Chat as bubbletea would: each command runs and its
// message goes back to Update until nothing is left. A run's events arrive
// one by one through the same commands, so a prompt returns when its turn
// ended.
type chatHarness struct {
	t   testing.TB
	c   *Chat
	f   *fixture
	srv *agenttest.Server
	dir string
}

// newChat opens a chat at 100×30 on a new session of exampleCwd, talking to a
// fake provider with these replies.
func newChat(t testing.TB, replies ...agenttest.Reply) *chatHarness {
	t.Helper()
	f := newFixture(t)
	srv := agenttest.New(t, "openai", replies...)
	work := t.TempDir()
	tools, err := agent.Tools([]string{"bash"})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(model string) (*agent.Agent, error) {
		cfg := &agent.Config{}
		res, err := cfg.Resolve(agent.Settings{Provider: "openai", BaseURL: srv.BaseURL(), Model: orDefault(model, "fake-model"),
			Getenv: func(string) string { return "" }})
		if err != nil {
			return nil, err
		}
		return &agent.Agent{Provider: res.Provider, Model: res.Model, Thinking: res.Thinking, Tools: tools,
			Env: &agent.ToolEnv{Cwd: work}, Now: func() time.Time { return now },
			// Small enough that two short exchanges have something to summarize.
			Compaction: compaction.Settings{Enabled: true, ReserveTokens: 1000, KeepRecentTokens: 40}}, nil
	}
	dir := jsonl.Dir(filepath.Join(f.arbor, "sessions"), exampleCwd)
	s, err := jsonl.Create(exampleCwd, dir)
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.Open("")
	t.Cleanup(func() { cat.Close() })
	c, err := NewChat(ChatOptions{NewAgent: mk, Models: []string{"fake-model", "other-model"}, Cwd: exampleCwd, Dir: dir,
		Session: s, Blobs: memBlobs{}, Catalog: cat, Scope: catalog.Scope{Cwd: exampleCwd},
		Export: func(l *session.Log, path, out string) (string, error) {
			w, err := os.Create(out)
			if err != nil {
				return "", err
			}
			defer w.Close()
			return out, export.HTML(w, l, export.Options{})
		},
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h := &chatHarness{t: t, c: c, f: f, srv: srv, dir: work}
	h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	h.run(c.Init())
	return h
}

type memBlobs map[string][]byte

func (m memBlobs) Put(data []byte) (string, error) {
	ref := fmt.Sprintf("mem-%d", len(m))
	m[ref] = data
	return ref, nil
}

func (h *chatHarness) send(msg tea.Msg) {
	_, cmd := h.c.Update(msg)
	h.run(cmd)
}

func (h *chatHarness) run(cmd tea.Cmd) { runCmd(cmd, h.send) }

func (h *chatHarness) keys(keys ...string) {
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

func (h *chatHarness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// say types a line and presses enter.
func (h *chatHarness) say(s string) {
	h.typeText(s)
	h.keys("enter")
}

var sessionFile = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl`)

// screen is the chat without colours; the session's random ids and its
// file are replaced by stable names.
func (h *chatHarness) screen() string {
	s := ansi.Strip(h.c.View().Content)
	s = sessionFile.ReplaceAllString(s, "$$FILE")
	s = strings.ReplaceAll(s, h.c.log.Header().ID, "$ID")
	for i, e := range h.c.log.Entries() {
		s = strings.ReplaceAll(s, e.ID, fmt.Sprintf("E%02d", i))
	}
	return strings.ReplaceAll(s, h.f.arbor, "$ARBOR")
}

// stream starts a turn whose reply never ends, and feeds the screen the
// events of a reply being written, as the provider's deltas would.
func (h *chatHarness) stream(events ...agent.Event) {
	c := h.c
	c.work(running, func(ctx context.Context, gen int) tea.Msg {
		<-ctx.Done()
		return runDoneMsg{gen, nil, agent.ErrAborted}
	})
	for _, e := range events {
		c.Update(agentEventMsg{c.gen, e})
	}
}

func delta(kind string, i int, text string) agent.Event {
	return agent.Event{Type: "message_update", AssistantMessageEvent: &agent.Delta{Type: kind, ContentIndex: i, Delta: text}}
}

// long is a reply of some 60 tokens.
func long(word string) string { return strings.Repeat(word+" ", 60) }

func numbered(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d\n", i+1)
	}
	return b.String()
}

// TestChatScreens draws the chat in each of its states at 120×30.
func TestChatScreens(t *testing.T) {
	steps := []struct {
		name    string
		replies []agenttest.Reply
		do      func(h *chatHarness)
	}{
		{"idle", nil, func(h *chatHarness) {}},
		{"answer", []agenttest.Reply{{Text: "Durations take **d** for days now.\n\nThe parser\treads `3d` as 72h.", Input: 1200, Output: 40}},
			func(h *chatHarness) { h.say("make 3d parse as days") }},
		{"thinking", []agenttest.Reply{{Thinking: "The user wants days.\nCheck the unit table.", Text: "Done."}},
			func(h *chatHarness) { h.say("days?") }},
		{"thinking-shown", []agenttest.Reply{{Thinking: "The user wants days.\nCheck the unit table.", Text: "Done."}},
			func(h *chatHarness) { h.say("days?"); h.keys("ctrl+t") }},
		{"tool-call", []agenttest.Reply{{Calls: []agenttest.Call{{ID: "call_1", Name: "bash", Args: `{"command":"seq 1 12"}`}}}, {Text: "Twelve lines."}},
			func(h *chatHarness) { h.say("count to twelve") }},
		{"tool-call-expanded", []agenttest.Reply{{Calls: []agenttest.Call{{ID: "call_1", Name: "bash", Args: `{"command":"seq 1 12"}`}}}, {Text: "Twelve lines."}},
			func(h *chatHarness) { h.say("count to twelve"); h.keys("ctrl+o") }},
		{"streaming", nil, func(h *chatHarness) {
			h.say("") // nothing is sent for an empty editor
			// Each block opens with its *_start, as the agent sends them.
			h.stream(agent.Event{Type: "agent_start"}, delta("thinking_start", 0, ""), delta("thinking_delta", 0, "Looking at units"),
				delta("thinking_end", 0, ""), delta("text_start", 1, ""), delta("text_delta", 1, "The unit table has"), delta("text_delta", 1, " no entry for d"))
		}},
		{"queued", nil, func(h *chatHarness) {
			h.stream(delta("text_delta", 0, "Working on it"))
			h.say("and weeks too")
			h.say("then run the tests")
		}},
		{"busy-command", nil, func(h *chatHarness) {
			h.stream(delta("text_delta", 0, "Working on it"))
			h.say("/new")
		}},
		{"multiline", nil, func(h *chatHarness) { h.typeText("first line"); h.keys("alt+enter"); h.typeText("second line") }},
		{"completion", nil, func(h *chatHarness) { h.typeText("/c") }},
		{"completion-down", nil, func(h *chatHarness) { h.typeText("/c"); h.keys("down") }},
		{"completion-tab", nil, func(h *chatHarness) { h.typeText("/com"); h.keys("tab") }},
		{"help", nil, func(h *chatHarness) { h.typeText("?") }},
		{"help-scrolled", nil, func(h *chatHarness) { h.typeText("?"); h.keys("pgdown", "up") }},
		{"history", []agenttest.Reply{{Text: "one"}, {Text: "two"}}, func(h *chatHarness) {
			h.say("first prompt")
			h.say("second prompt")
			h.keys("up", "up")
		}},
		{"history-recent", []agenttest.Reply{{Text: "one"}}, func(h *chatHarness) {
			h.say("first prompt")
			h.keys("up", "up") // past this session's prompt: the newest of the folder's other sessions
		}},
		{"provider-error", []agenttest.Reply{{Status: 400, Body: `{"error":{"message":"bad \u001b[31mrequest"}}`}},
			func(h *chatHarness) { h.say("hello") }},
		{"name", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/name Fix the units") }},
		{"session", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/session") }},
		{"stats", []agenttest.Reply{{Text: "hi", Input: 900, Output: 12}}, func(h *chatHarness) { h.say("hello"); h.say("/stats") }},
		{"label", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/label checkpoint") }},
		{"pin", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/pin") }},
		{"unpin", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/pin"); h.say("/unpin"); h.say("/unpin") }},
		{"completion-u", nil, func(h *chatHarness) { h.typeText("/u") }},
		{"clear", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/clear") }},
		{"clone", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/clone") }},
		{"new", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/new") }},
		{"cursor", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/cursor new review"); h.say("/cursor") }},
		{"model", nil, func(h *chatHarness) { h.say("/model"); h.say("/model other-model") }},
		{"compact", []agenttest.Reply{{Text: long("one")}, {Text: long("two")}, {Text: "## Goal\nDays in timeparse."}, {Text: "## Goal\nDays in timeparse."}},
			func(h *chatHarness) { h.say("first"); h.say("second"); h.say("/compact keep the goal") }},
		{"compact-undo", []agenttest.Reply{{Text: long("one")}, {Text: long("two")}, {Text: "## Goal\nDays in timeparse."}, {Text: "## Goal\nDays in timeparse."}},
			func(h *chatHarness) { h.say("first"); h.say("second"); h.say("/compact"); h.say("/compact --undo") }},
		{"export", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) {
			h.say("hello")
			h.say("/export " + filepath.Join(h.dir, "out.html"))
		}},
		{"unknown", nil, func(h *chatHarness) { h.say("/frobnicate") }},
		{"markdown", []agenttest.Reply{{Text: "## Days\n\n- `d` is a unit\n- **tests** pass\n\n```go\nfunc unit(s string) time.Duration {\n\treturn 24 * time.Hour\n}\n```\n", Chunk: 1000}},
			func(h *chatHarness) { h.say("show me") }},
		{"fork", []agenttest.Reply{{Text: "one"}, {Text: "two"}}, func(h *chatHarness) { h.say("first"); h.say("second"); h.say("/fork") }},
		{"fork-chosen", []agenttest.Reply{{Text: "one"}, {Text: "two"}}, func(h *chatHarness) {
			h.say("first")
			h.say("second")
			h.say("/fork")
			h.keys("enter")
		}},
		{"fork-nothing", nil, func(h *chatHarness) { h.say("/fork") }},
		{"copy", []agenttest.Reply{{Text: "the answer"}}, func(h *chatHarness) { h.say("hello"); h.say("/copy") }},
		{"copy-nothing", nil, func(h *chatHarness) { h.say("/copy") }},
		{"share", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) {
			h.c.opt.ShareCommand = "grep -c '<html' >/dev/null && echo 'published: https://gist.example.test/abc\x1b[31m'"
			h.say("hello")
			h.say("/share")
		}},
		{"share-unset", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/share") }},
		{"hostile", []agenttest.Reply{{Thinking: "\x1b]0;owned\x07", Text: "clear\x1b[2J\x1b[H screen, \u202eright-to-left\u202c, bell\x07", Chunk: 1000, Calls: []agenttest.Call{{ID: "c1", Name: "bash", Args: `{"command":"printf '\\033[31mred\\033[0m'"}`}}}, {Text: "ok"}},
			func(h *chatHarness) {
				if _, err := h.c.log.SetSessionName("\x1b[1mbold\u2028name"); err != nil {
					t.Fatal(err)
				}
				h.say("go")
				h.keys("ctrl+t")
			}},
		{"narrow", []agenttest.Reply{{Text: "Durations take d for days now; the parser reads 3d as seventy-two hours and 1w as a week."}},
			func(h *chatHarness) { h.say("make 3d parse as days"); h.send(tea.WindowSizeMsg{Width: 50, Height: 20}) }},
		{"scrolled", []agenttest.Reply{{Text: numbered(40)}},
			func(h *chatHarness) {
				h.say("forty lines please")
				h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
				h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
			}},
		{"resume", nil, func(h *chatHarness) { h.say("/resume") }},
		{"tree", []agenttest.Reply{{Text: "hi"}}, func(h *chatHarness) { h.say("hello"); h.say("/tree") }},
		{"tree-user", []agenttest.Reply{{Text: "one"}, {Text: "two"}}, func(h *chatHarness) {
			h.say("first")
			h.say("second")
			h.say("/tree")
			h.keys("up", "enter", "enter") // the second prompt, no summary
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			h := newChat(t, s.replies...)
			s.do(h)
			got := h.screen()
			if strings.HasPrefix(s.name, "fork") {
				// The selector shows when each message was written (now: the
				// clock's time; the day too when it is not the test clock's).
				got = regexp.MustCompile(`(?:[A-Z][a-z]{2} [ \d]\d| {6}) \d\d:\d\d\b`).ReplaceAllString(got, "       hh:mm")
			}
			if s.name == "export" {
				// The folder's name varies in length: the line's padding with it.
				got = regexp.MustCompile(`\$WORK/out.html *`).ReplaceAllString(strings.ReplaceAll(got, h.dir, "$WORK"), "$$WORK/out.html")
			}
			golden(t, "chat-"+s.name, got)
		})
	}
}

// TestChatTreeUserMessage: Enter in /tree on one of your messages moves the
// leaf to before it and puts its text in the editor (pi's navigateTree); on
// an answer the leaf moves to the answer itself.
func TestChatTreeUserMessage(t *testing.T) {
	h := newChat(t, agenttest.Reply{Text: "one"}, agenttest.Reply{Text: "two"})
	h.say("first")
	h.say("second")
	path := h.c.log.PathTo(h.c.log.Leaf().ID)
	if len(path) < 4 {
		t.Fatalf("branch of %d entries", len(path))
	}
	firstAnswer, second := path[len(path)-3], path[len(path)-2]
	if second.Role() != session.RoleUser || firstAnswer.Role() != session.RoleAssistant {
		t.Fatalf("unexpected branch: %s, %s", firstAnswer.Role(), second.Role())
	}
	h.say("/tree")
	h.keys("up", "enter", "enter")
	if h.c.over != noOverlay {
		t.Fatal("the tree is still open after Enter")
	}
	if got := h.c.log.Leaf(); got == nil || got.ID != firstAnswer.ID {
		t.Errorf("leaf after Enter on the second prompt: %v, want its parent %s", got, firstAnswer.ID)
	}
	if got := h.c.editor.Value(); got != "second" {
		t.Errorf("editor holds %q, want the prompt's text", got)
	}
	// Sending it makes a sibling of the old prompt: the old branch stays.
	h.srv.Add(agenttest.Reply{Text: "three"})
	h.keys("enter")
	leaf := h.c.log.Leaf()
	p := h.c.log.PathTo(leaf.ID)
	if len(p) < 2 || p[len(p)-2].ParentID != firstAnswer.ID || p[len(p)-2].ID == second.ID {
		t.Errorf("the resent prompt is not a new child of %s", firstAnswer.ID)
	}
	if h.c.log.Entry(second.ID) == nil {
		t.Error("the old prompt is gone")
	}

	// On an answer the leaf moves to the answer, the editor stays empty.
	h.say("/tree")
	var target string
	for i, r := range h.c.tree.rows {
		if r.Node.Entry.ID == firstAnswer.ID {
			target = r.Node.Entry.ID
			h.c.tree.sel = i
		}
	}
	if target == "" {
		t.Fatal("the first answer is not in the tree")
	}
	h.keys("enter", "enter")
	if got := h.c.log.Leaf(); got == nil || got.ID != firstAnswer.ID {
		t.Errorf("leaf after Enter on an answer: %v, want %s", got, firstAnswer.ID)
	}
	if v := h.c.editor.Value(); v != "" {
		t.Errorf("editor holds %q after moving to an answer", v)
	}
}

// TestChatUnpin: /unpin takes back what /pin did, even after more turns.
func TestChatUnpin(t *testing.T) {
	h := newChat(t, agenttest.Reply{Text: "hi"}, agenttest.Reply{Text: "more"})
	h.say("hello")
	h.say("/pin")
	pinned := h.c.log.Leaf().ID
	cur := h.c.log.Cursor("")
	if r, _ := cur.Resolution(pinned); r.Level != session.Pinned {
		t.Fatalf("/pin did not pin %s: %v", pinned, r)
	}
	h.say("next")
	h.say("/unpin")
	if r, _ := cur.Resolution(pinned); r.Level == session.Pinned {
		t.Errorf("/unpin left %s pinned", pinned)
	}
	if !strings.Contains(h.screen(), "unpinned the assistant message") {
		t.Errorf("no note of the unpin:\n%s", h.screen())
	}
}

// TestChatHistoryRecent: Up walks back through the open session's prompts,
// then through those of the folder's recent sessions, newest first, each
// once; they arrive in the background and do not disturb a walk under way.
func TestChatHistoryRecent(t *testing.T) {
	h := newChat(t, agenttest.Reply{Text: "one"})
	h.say("my prompt")
	// The fixture's two sessions of the folder: the example and its fork a
	// day later, with the same prompts.
	fork := filepath.Join(filepath.Dir(h.f.example), "2026-11-21T09-14-02-118Z_019ab0c3-0000-7000-8000-000000000001.jsonl")
	l, err := jsonl.Read(fork)
	if err != nil {
		t.Fatal(err)
	}
	theirs := userPrompts(l)
	if len(theirs) < 2 {
		t.Fatalf("the fixture's fork has %d prompts", len(theirs))
	}
	want := append(slices.Clone(theirs), "my prompt")
	if !slices.Equal(h.c.history, want) {
		t.Fatalf("history:\n%q\nwant (the other sessions' prompts once, then this one's):\n%q", h.c.history, want)
	}
	h.keys("up")
	if got := h.c.editor.Value(); got != "my prompt" {
		t.Errorf("first up: %q", got)
	}
	h.keys("up")
	if got := h.c.editor.Value(); got != theirs[len(theirs)-1] {
		t.Errorf("second up: %q, want the newest prompt of the fork %q", got, theirs[len(theirs)-1])
	}
	// A load arriving while browsing keeps the prompt shown where it is.
	h.send(recentLoadedMsg{h.c.st.recentPrompts(h.c.opt.Scope)})
	h.keys("down")
	if got := h.c.editor.Value(); got != "my prompt" {
		t.Errorf("down after a reload: %q", got)
	}
	// A prompt sent but not yet in the session (queued) stays through a load.
	h.c.remember("queued prompt")
	h.send(recentLoadedMsg{h.c.st.recentPrompts(h.c.opt.Scope)})
	if n := len(h.c.history); n == 0 || h.c.history[n-1] != "queued prompt" {
		t.Errorf("a load lost the queued prompt: %q", h.c.history)
	}
}

func TestMergeHistory(t *testing.T) {
	recent := []recentPrompts{
		{"b.jsonl", []string{"b1", "shared", "b2"}}, // the newest session
		{"open.jsonl", []string{"o-old"}},
		{"a.jsonl", []string{"a1", "b2", "mine"}},
	}
	got := mergeHistory(recent, "open.jsonl", []string{"mine", "last"})
	want := []string{"a1", "b1", "shared", "b2", "mine", "last"}
	if !slices.Equal(got, want) {
		t.Errorf("mergeHistory = %q, want %q", got, want)
	}
	var many []string
	for i := range maxRecent + 50 {
		many = append(many, fmt.Sprint("p", i))
	}
	got = mergeHistory([]recentPrompts{{"x", many}}, "", nil)
	if len(got) != maxRecent || got[len(got)-1] != many[len(many)-1] || got[0] != many[50] {
		t.Errorf("bounded history: %d prompts, from %q to %q", len(got), got[0], got[len(got)-1])
	}
}

// TestChatEditorTabs: what is pasted or typed keeps its tabs in the text
// sent; a tab shows as ⇥, one column, as the textarea measures it; the
// character the editor keeps for a tab, pasted, comes back escaped and not
// as a tab; Tab after a slash still completes the command.
func TestChatEditorTabs(t *testing.T) {
	h := newChat(t)
	h.send(tea.PasteMsg{Content: "all:\n\tgo vet ./...\r\n\tgo test ./...\n"})
	h.typeText("x")
	h.keys("tab")
	h.typeText("y")
	if got, want := h.c.editor.Value(), "all:\n\tgo vet ./...\n\tgo test ./...\nx\ty"; got != want {
		t.Errorf("editor holds %q, want %q", got, want)
	}
	if s := h.screen(); !strings.Contains(s, "⇥go vet ./...") || !strings.Contains(s, "x⇥y") {
		t.Errorf("the tabs are not drawn as ⇥:\n%s", s)
	}
	h.keys("ctrl+c")
	h.send(tea.PasteMsg{Content: "a\ufdd0b"})
	if got := h.c.editor.Value(); got != `a\ufdd0b` {
		t.Errorf("a pasted U+FDD0 is held as %q", got)
	}
	h.keys("ctrl+c")
	h.typeText("/com")
	h.keys("tab")
	if got := h.c.editor.Value(); got != "/compact " {
		t.Errorf("tab after /com: %q", got)
	}
}

// TestChatNotesStay: the replies to /label and /pin stay in the
// conversation, in order, when it is drawn again from the session (a new
// cursor, a switch back); those made on another branch are not shown there.
func TestChatNotesStay(t *testing.T) {
	h := newChat(t, agenttest.Reply{Text: "hi"}, agenttest.Reply{Text: "more"})
	h.say("hello")
	h.say("/label checkpoint")
	h.say("/pin")
	h.say("/cursor new review")
	s := h.screen()
	label, pin, cursor := strings.Index(s, "labeled "), strings.Index(s, "pinned the assistant message"), strings.Index(s, "a new cursor review")
	if label < 0 || pin < 0 || cursor < 0 || !(strings.Index(s, "hi") < label && label < pin && pin < cursor) {
		t.Fatalf("after /cursor new the replies are not all shown in order:\n%s", s)
	}
	// On the new cursor's own branch, its notes; back on main, main's.
	h.say("next")
	h.say("/label on review")
	h.say("/cursor switch main")
	s = h.screen()
	if strings.Contains(s, "on review") || strings.Contains(s, "more") {
		t.Errorf("main shows the review branch's reply or note:\n%s", s)
	}
	if !strings.Contains(s, "pinned the assistant message") || !strings.Contains(s, "a new cursor review") {
		t.Errorf("back on main its notes are gone:\n%s", s)
	}
	h.say("/cursor switch review")
	if s = h.screen(); !strings.Contains(s, "on review") || !strings.Contains(s, "more") {
		t.Errorf("back on review its note is gone:\n%s", s)
	}
	// Another session shows none of them.
	h.say("/new")
	if s = h.screen(); strings.Contains(s, "labeled") {
		t.Errorf("a new session shows the old one's notes:\n%s", s)
	}
}

// TestChatCompactNothing: /compact with nothing to summarize says why: the
// context is within what compaction keeps whole, or the branch ends in a
// compaction.
func TestChatCompactNothing(t *testing.T) {
	h := newChat(t, agenttest.Reply{Text: "hi"})
	h.say("hello")
	h.say("/compact")
	flat := func() string { return strings.Join(strings.Fields(h.screen()), " ") }
	if s := flat(); !strings.Contains(s, "nothing to compact: the messages come to ~3 tokens (compaction's estimate), and it keeps the last 40 tokens whole (keepRecentTokens); nothing older to summarize") {
		t.Errorf("/compact on a short session:\n%s", h.screen())
	}
	if reqs := h.srv.Requests(); len(reqs) != 1 {
		t.Errorf("%d requests: /compact asked the model for a summary of nothing", len(reqs))
	}

	h.srv.Add(agenttest.Reply{Text: long("two")}, agenttest.Reply{Text: "## Goal\nDays."}, agenttest.Reply{Text: "## Goal\nDays."})
	h.say(long("second"))
	h.say("/compact")
	if h.c.log.Leaf().Type != session.TypeCompaction {
		t.Fatalf("the second /compact did not compact: the leaf is a %s\n%s", h.c.log.Leaf().Type, h.screen())
	}
	h.say("/compact")
	if s := flat(); !strings.Contains(s, "nothing to compact: the branch ends in a compaction; nothing was added since") {
		t.Errorf("/compact right after a compaction:\n%s", h.screen())
	}
}
