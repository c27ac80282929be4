package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// startChat runs `arbor args…` in tmux against a fake provider with these replies.
func startChat(t *testing.T, f *fixture, replies []agenttest.Reply, args ...string) (*terminal, *agenttest.Server) {
	t.Helper()
	srv := agenttest.New(t, "openai", replies...)
	// Compaction and its undo need something to summarize in a short chat.
	write(t, filepath.Join(f.arbor, "config.json"), []byte(`{"compaction":{"enabled":true,"reserveTokens":1000,"keepRecentTokens":40}}`))
	env := []string{"ARBOR_MODEL_BASE_URL=" + srv.BaseURL(), "ARBOR_MODEL=fake-model", "ARBOR_API_KEY=", "OPENAI_API_KEY="}
	return startTerminal(t, f, env, args...), srv
}

// chatSession is the one session file the chat wrote in the fixture's
// working folder, read back.
func chatSession(t *testing.T, f *fixture) (*session.Log, string) {
	t.Helper()
	dir := jsonl.Dir(filepath.Join(f.arbor, "sessions"), f.work)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) != 1 {
		t.Fatalf("%d session files in %s, want 1: %v", len(files), dir, files)
	}
	l, err := jsonl.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return l, files[0]
}

// messages are the role and text of each message on the active branch.
func messages(l *session.Log) []string {
	var out []string
	leaf := l.Leaf()
	if leaf == nil {
		return nil
	}
	for _, e := range l.PathTo(leaf.ID) {
		if e.Type != session.TypeMessage {
			continue
		}
		m, _ := decodeMessage(e.MessageRaw())
		text := contentText(m.Content)
		if m.StopReason == "aborted" {
			text += " [aborted]"
		}
		out = append(out, m.Role+": "+text)
	}
	return out
}

func wantMessages(t *testing.T, l *session.Log, want ...string) {
	t.Helper()
	if got := messages(l); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the session's branch holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestChatInTmux: a prompt and its streamed answer, a message queued while
// the agent works, Esc in the middle of a reply, /name, /export, /compact
// and /compact --undo; the session file is checked after each.
func TestChatInTmux(t *testing.T) {
	f := newFixture(t)
	term, srv := startChat(t, f, []agenttest.Reply{
		{Text: "Durations now take d for days.", Chunk: 4},
		{Text: "first answer " + strings.Repeat("one ", 60), Delay: 1500e6},
		{Text: "second answer " + strings.Repeat("two ", 60)},
		{Text: "a partial answer that never ends", Stall: true},
	})
	term.waitFor("Ask anything")
	term.text("make 3d parse as days")
	term.keys("Enter")
	term.waitFor("Durations now take d for days.")
	l, path := chatSession(t, f)
	wantMessages(t, l, "user: make 3d parse as days", "assistant: Durations now take d for days.")

	// A message typed while the agent works waits for the turn.
	term.text("first")
	term.keys("Enter")
	term.waitFor("Working")
	term.text("second")
	term.keys("Enter")
	term.waitFor("queued second")
	term.waitFor("second answer")
	term.waitGone("queued second", "the queued message stayed queued")

	// Esc stops a reply being streamed; the partial reply is kept.
	term.text("go on")
	term.keys("Enter")
	term.waitFor("a partial answer that never ends")
	term.keys("Escape")
	term.waitFor("(stopped; the partial reply is kept)")
	l, _ = chatSession(t, f)
	got := messages(l)
	if last := got[len(got)-1]; last != "assistant: a partial answer that never ends [aborted]" {
		t.Fatalf("after esc the last message is %q", last)
	}

	term.text("/name units work")
	term.keys("Enter")
	term.waitFor("named units work")
	if l, _ = chatSession(t, f); l.SessionName() != "units work" {
		t.Fatalf("name %q", l.SessionName())
	}

	out := filepath.Join(f.work, "chat.html")
	term.text("/export " + out)
	term.keys("Enter")
	term.waitFor("exported to")
	if data, err := os.ReadFile(out); err != nil || !strings.Contains(string(data), "<html") {
		t.Fatalf("export: %v (%d bytes)", err, len(data))
	}

	srv.Add(agenttest.Reply{Text: "## Goal\nDays in timeparse."}, agenttest.Reply{Text: "## Goal\nDays in timeparse."})
	term.text("/compact keep the goal")
	term.keys("Enter")
	term.waitFor("compacted:")
	l, _ = chatSession(t, f)
	if leaf := l.Leaf(); leaf.Type != session.TypeCompaction {
		t.Fatalf("after /compact the leaf is a %s", leaf.Type)
	}
	focused := false
	for _, r := range srv.Requests() {
		focused = focused || strings.Contains(string(r.Raw), "keep the goal")
	}
	if !focused {
		t.Errorf("no summary request carries the focus")
	}
	compacted := l.Leaf().ID
	term.text("/compact --undo")
	term.keys("Enter")
	term.waitFor("undid compaction " + compacted)
	l, _ = chatSession(t, f)
	if leaf := l.Leaf(); leaf.ID == compacted || l.Entry(compacted) == nil {
		t.Fatalf("after the undo the leaf is %s; the compaction %s must stay in the file", leaf.ID, compacted)
	}

	term.keys("C-c")
	term.waitFor("EXIT=0")
	if _, err := jsonl.Read(path); err != nil {
		t.Fatal(err)
	}

	// The session the stopped reply was kept in continues: arbor -c opens
	// it, and the next request is valid (the aborted reply is not sent).
	term, srv = startChat(t, f, []agenttest.Reply{{Text: "carrying on"}}, "-c")
	term.waitFor("units work · fake-model")
	term.waitFor("a partial answer that never ends")
	term.text("carry on")
	term.keys("Enter")
	term.waitFor("carrying on")
	if reqs := srv.Requests(); len(reqs) != 1 || strings.Contains(string(reqs[0].Raw), "a partial answer that never ends") {
		t.Errorf("the request after the stop sends the aborted reply: %d requests", len(reqs))
	}
	term.keys("C-c")
	term.waitFor("EXIT=0")
}

// TestChatTreeInTmux: /tree, Enter on an earlier entry, a summary of the
// branch left written by the model; the chat shows the new branch.
func TestChatTreeInTmux(t *testing.T) {
	f := newFixture(t)
	term, _ := startChat(t, f, []agenttest.Reply{{Text: "answer one"}, {Text: "answer two"}, {Text: "## Goal\nthe branch left behind"}})
	term.waitFor("Ask anything")
	term.text("question one")
	term.keys("Enter")
	term.waitFor("answer one")
	term.text("question two")
	term.keys("Enter")
	term.waitFor("answer two")
	l, _ := chatSession(t, f)
	target := l.PathTo(l.Leaf().ID)
	var answerOne string
	for _, e := range target {
		if m, _ := decodeMessage(e.MessageRaw()); contentText(m.Content) == "answer one" {
			answerOne = e.ID
		}
	}
	term.text("/tree")
	term.keys("Enter")
	term.waitFor("Session tree")
	term.keys("Up", "Up")
	term.waitFor("▸  " + answerOne)
	term.keys("Enter")
	term.waitFor("Summarize the branch you leave?")
	term.keys("Down", "Enter")
	s := term.waitFor("the leaf moved")
	if strings.Contains(s, "question two") {
		t.Errorf("the chat still shows the branch left:\n%s", s)
	}
	if !strings.Contains(s, "the branch left behind") {
		t.Errorf("the chat does not show the branch summary:\n%s", s)
	}
	l, _ = chatSession(t, f)
	if leaf := l.Leaf(); leaf.Type != session.TypeBranchSummary || leaf.ParentID != answerOne {
		t.Fatalf("the leaf is a %s under %s, want a branch_summary under %s", leaf.Type, leaf.ParentID, answerOne)
	}
	term.keys("C-c")
	term.waitFor("EXIT=0")
}

// TestChatTreeEditInTmux: Enter in /tree on one of your messages moves the
// leaf to before it and puts its text in the editor; sent again, it starts a
// new branch beside the old one (pi's /tree).
func TestChatTreeEditInTmux(t *testing.T) {
	f := newFixture(t)
	term, _ := startChat(t, f, []agenttest.Reply{{Text: "answer one"}, {Text: "answer two"}, {Text: "answer again"}})
	term.waitFor("Ask anything")
	term.text("question one")
	term.keys("Enter")
	term.waitFor("answer one")
	term.text("question two")
	term.keys("Enter")
	term.waitFor("answer two")
	l, _ := chatSession(t, f)
	branch := l.PathTo(l.Leaf().ID)
	questionTwo, answerOne := branch[len(branch)-2], branch[len(branch)-3]
	term.text("/tree")
	term.keys("Enter")
	term.waitFor("Session tree")
	term.keys("Up")
	term.waitFor("▸  " + questionTwo.ID)
	term.keys("Enter")
	term.waitFor("Summarize the branch you leave?")
	term.keys("Enter") // no summary
	s := term.waitFor("its text is in the editor")
	if !strings.Contains(s, "› question two") {
		t.Errorf("the editor does not hold the message:\n%s", s)
	}
	if strings.Contains(s, "answer two") {
		t.Errorf("the chat still shows the branch left:\n%s", s)
	}
	term.keys("Enter")
	term.waitFor("answer again")
	l, _ = chatSession(t, f)
	leaf := l.Leaf()
	resent := l.Entry(leaf.ParentID)
	if resent == nil || resent.ParentID != answerOne.ID || resent.ID == questionTwo.ID {
		t.Errorf("the message sent again is not a new child of %s", answerOne.ID)
	}
	if l.Entry(questionTwo.ID) == nil {
		t.Error("the old branch is gone")
	}
	term.keys("C-c")
	term.waitFor("EXIT=0")
}

// TestChatHistoryInTmux: in a new session, Up brings back the prompts of the
// folder's earlier sessions.
func TestChatHistoryInTmux(t *testing.T) {
	f := newFixture(t)
	term, _ := startChat(t, f, []agenttest.Reply{{Text: "answer one"}})
	term.waitFor("Ask anything")
	term.text("an earlier question")
	term.keys("Enter")
	term.waitFor("answer one")
	term.keys("C-c")
	term.waitFor("EXIT=0")

	term, _ = startChat(t, f, nil)
	s := term.waitFor("Ask anything")
	if strings.Contains(s, "an earlier question") {
		t.Fatalf("the new session shows the old one:\n%s", s)
	}
	term.keys("Up")
	term.waitFor("› an earlier question")
	term.keys("C-c", "C-c")
	term.waitFor("EXIT=0")
}

// TestChatResumeInTmux: arbor -r opens the picker; the session picked is
// the one the chat continues.
func TestChatResumeInTmux(t *testing.T) {
	f := newFixture(t)
	term, _ := startChat(t, f, []agenttest.Reply{{Text: "continued here"}}, "-r")
	term.waitFor("Sessions (Current Folder)")
	term.keys("Tab")
	term.waitFor("Sessions (All)")
	term.text("Fix day units")
	s := term.waitFor("Search: Fix day units")
	if !strings.Contains(s, "› Fix day units") {
		term.keys("Down")
		term.waitFor("› Fix day units")
	}
	term.keys("Enter")
	term.waitFor("Fix day units in timeparse · fake-model")
	term.text("and weeks?")
	term.keys("Enter")
	term.waitFor("continued here")
	l, err := jsonl.Read(f.example)
	if err != nil {
		t.Fatal(err)
	}
	got := messages(l)
	if strings.Join(got[len(got)-2:], "\n") != "user: and weeks?\nassistant: continued here" {
		t.Fatalf("the example session ends with %q", got[len(got)-2:])
	}

	// /resume switches the chat to another session.
	term.text("/resume")
	term.keys("Enter")
	term.waitFor("Sessions (Current Folder)")
	term.keys("Tab")
	term.waitFor("Sessions (All)")
	term.text("the fork")
	term.waitFor("› the fork")
	term.keys("Enter")
	term.waitFor("the fork · fake-model")
	term.keys("C-c")
	term.waitFor("EXIT=0")
}

// TestChatFlagsInTmux: --name and -c as in print mode, --no-session writes
// nothing, and NO_COLOR takes the colours away.
func TestChatFlagsInTmux(t *testing.T) {
	f := newFixture(t)
	term, _ := startChat(t, f, []agenttest.Reply{{Text: "first answer"}}, "--name", "units")
	term.waitFor("units · fake-model · cursor main")
	if !colourCode.MatchString(term.screen(true)) {
		t.Errorf("no colour without NO_COLOR:\n%q", term.screen(true))
	}
	term.text("first question")
	term.keys("Enter")
	term.waitFor("first answer")
	term.keys("C-c")
	term.waitFor("EXIT=0")
	l, _ := chatSession(t, f)
	wantMessages(t, l, "user: first question", "assistant: first answer")

	term, _ = startChat(t, f, []agenttest.Reply{{Text: "second answer"}}, "-c")
	term.waitFor("units · fake-model")
	term.waitFor("first answer") // the conversation so far
	term.text("second question")
	term.keys("Enter")
	term.waitFor("second answer")
	term.keys("C-c")
	term.waitFor("EXIT=0")
	l, _ = chatSession(t, f)
	wantMessages(t, l, "user: first question", "assistant: first answer", "user: second question", "assistant: second answer")

	srv := agenttest.New(t, "openai", agenttest.Reply{Text: "kept in memory"})
	term = startTerminal(t, f, []string{"ARBOR_MODEL_BASE_URL=" + srv.BaseURL(), "ARBOR_MODEL=fake-model", "NO_COLOR=1"}, "--no-session")
	term.waitFor("(unnamed) · fake-model · cursor main · in memory")
	term.text("hello")
	term.keys("Enter")
	term.waitFor("kept in memory")
	if s := term.screen(true); colourCode.MatchString(s) {
		t.Errorf("colour codes with NO_COLOR:\n%q", s)
	}
	term.keys("C-c")
	term.waitFor("EXIT=0")
	chatSession(t, f) // still the one file
}

// TestChatForkCopyInTmux: /fork from the first message starts a new session
// from its parent with the message in the editor; /copy puts the last
// answer on tmux's clipboard (OSC 52, set-clipboard on).
func TestChatForkCopyInTmux(t *testing.T) {
	f := newFixture(t)
	term, _ := startChat(t, f, []agenttest.Reply{{Text: "answer one"}, {Text: "answer two"}, {Text: "answer again"}})
	term.tmux("set-option", "-g", "set-clipboard", "on")
	term.waitFor("Ask anything")
	term.text("question one")
	term.keys("Enter")
	term.waitFor("answer one")
	term.text("question two")
	term.keys("Enter")
	term.waitFor("answer two")
	_, first := chatSession(t, f)

	term.text("/copy")
	term.keys("Enter")
	term.waitFor("copied the last answer (OSC 52)")
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("tmux", "-S", term.sock, "show-buffer").CombinedOutput()
		if string(out) == "answer two" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tmux's buffer holds %q, want the last answer", out)
		}
		time.Sleep(50 * time.Millisecond)
	}

	term.text("/fork")
	term.keys("Enter")
	term.waitFor("Fork from a message")
	term.keys("Up", "Enter")
	s := term.waitFor("forked into a new session")
	if !strings.Contains(s, "› question one") {
		t.Errorf("the message is not in the editor:\n%s", s)
	}
	if strings.Contains(s, "answer one") {
		t.Errorf("the new session shows what came after the fork point:\n%s", s)
	}
	term.keys("Enter") // send it again in the new session
	term.waitFor("answer again")
	term.keys("C-c")
	term.waitFor("EXIT=0")

	dir := filepath.Dir(first)
	ents, _ := os.ReadDir(dir)
	var forked string
	for _, e := range ents {
		if p := filepath.Join(dir, e.Name()); strings.HasSuffix(p, ".jsonl") && p != first {
			forked = p
		}
	}
	if forked == "" {
		t.Fatalf("no new session file beside %s", first)
	}
	l, err := jsonl.Read(forked)
	if err != nil {
		t.Fatal(err)
	}
	if l.Header().ParentSession == "" {
		t.Errorf("the fork does not name its parent session")
	}
	wantMessages(t, l, "user: question one", "assistant: answer again")
}

// TestChatPasteTabsInTmux: a Makefile pasted into the editor (bracketed
// paste, as a terminal sends it) reaches the model with its tab-indented
// recipes byte for byte; a Tab typed where nothing completes is a tab too,
// and after a slash it still completes the command.
func TestChatPasteTabsInTmux(t *testing.T) {
	f := newFixture(t)
	term, srv := startChat(t, f, []agenttest.Reply{{Text: "the Makefile builds first"}, {Text: "a tab typed"}})
	term.waitFor("Ask anything")
	makefile := "build:\n\tgo build ./...\n\ntest: build\n\tgo test -race ./...\n"
	buf := filepath.Join(t.TempDir(), "Makefile")
	write(t, buf, []byte(makefile))
	term.tmux("load-buffer", buf)
	term.tmux("paste-buffer", "-p")
	term.waitFor("go test -race ./...")
	term.keys("Enter")
	term.waitFor("the Makefile builds first")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	msgs := srv.Messages(reqs[0])
	if got := msgs[len(msgs)-1]; got.Role != "user" || got.Text != makefile {
		t.Fatalf("the model received %s %q, want the Makefile as pasted %q", got.Role, got.Text, makefile)
	}

	term.text("/com")
	term.keys("Tab")
	term.waitFor("› /compact")
	term.keys("C-c")
	term.waitGone("› /compact", "ctrl+c did not clear the editor")
	term.text("a")
	term.keys("Tab")
	term.text("b")
	term.waitFor("› a⇥b")
	term.keys("Enter")
	term.waitFor("a tab typed")
	reqs = srv.Requests()
	msgs = srv.Messages(reqs[len(reqs)-1])
	if got := msgs[len(msgs)-1].Text; got != "a\tb" {
		t.Fatalf("the model received %q for a, Tab, b", got)
	}
	term.keys("C-c")
	term.waitFor("EXIT=0")
}

// TestChatBashStreamsInTmux: a bash call's output shows while the command
// runs (its first line during the sleep, before the second is printed), and
// the result takes its place when it ends.
func TestChatBashStreamsInTmux(t *testing.T) {
	f := newFixture(t)
	term, _ := startChat(t, f, []agenttest.Reply{
		{Calls: []agenttest.Call{{ID: "call_1", Name: "bash", Args: `{"command":"echo $((6*7)) lines; sleep 3; echo total $((2+2))"}`}}},
		{Text: "the command is done"},
	})
	term.waitFor("Ask anything")
	term.text("run the slow command")
	term.keys("Enter")
	s := term.waitFor("42 lines")
	if strings.Contains(s, "total 4") || strings.Contains(s, "the command is done") {
		t.Fatalf("the first line showed only with the rest:\n%s", s)
	}
	s = term.waitFor("the command is done")
	if !strings.Contains(s, "42 lines") || !strings.Contains(s, "total 4") {
		t.Errorf("the result does not show the whole output:\n%s", s)
	}
	term.keys("C-c")
	term.waitFor("EXIT=0")
}
