package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session/jsonl"
)

func TestAgentExclusiveFlags(t *testing.T) {
	w := newWorld(t)
	flags := map[string][]string{
		"--continue":   {"-c"},
		"--resume":     {"-r"},
		"--session":    {"--session", "x.jsonl"},
		"--session-id": {"--session-id", "0195f1c2-0000-7000-8000-000000000000"},
		"--no-session": {"--no-session"},
		"--fork":       {"--fork", "x.jsonl"},
	}
	order := []string{"--continue", "--resume", "--session", "--session-id", "--no-session", "--fork"}
	for i, a := range order {
		for _, b := range order[i+1:] {
			args := append(append(append([]string{"-p"}, flags[a]...), flags[b]...), "hi")
			r := w.run("", args...)
			want := "arbor: " + a + " and " + b + " cannot be used together\n"
			if r.code != 2 || !strings.HasPrefix(r.stderr, want) {
				t.Errorf("%v: exit %d stderr %q, want %q", args, r.code, r.stderr, want)
			}
		}
	}
	if r := w.run("", "-p", "--ephemeral", "-c", "hi"); r.code != 2 || !strings.HasPrefix(r.stderr, "arbor: --continue and --ephemeral cannot be used together") {
		t.Errorf("--ephemeral: %d %q", r.code, r.stderr)
	}
}

func TestAgentUsage(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{nil, "", "arbor: no terminal: run the agent with -p \"prompt\" (or pipe the prompt into arbor -p)\n"},
		{[]string{"-p", "-r", "hi"}, "", "arbor: --resume picks a session interactively, which print mode cannot do; use --continue, or --session <id> (ids from 'arbor ls')\n"},
		{[]string{"-p"}, "", "arbor: no prompt: give it as an argument (arbor -p \"prompt\") or on stdin\n"},
		{[]string{"-p", "--mode", "xml", "hi"}, "", "arbor: --mode must be text, json or rpc, not \"xml\"\n"},
		{[]string{"-p", "--session-id", "nope", "hi"}, "", "arbor: --session-id must be a UUID, not \"nope\"\n"},
		{[]string{"-p", "--tools", "read,rm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "hi"}, "", "arbor: --tools: unknown tool \"rm\": the tools are read, bash, edit, write, ls, grep, find\n"},
		{[]string{"-p", "--context-window", "0", "hi"}, "", "arbor: --context-window must be a number of tokens above 0, not 0\n"},
		{[]string{"lss"}, "", "arbor: unknown command \"lss\" for \"arbor\" (to run the agent on a prompt: arbor -p \"lss\")\n"},
	} {
		r := w.run(tc.stdin, tc.args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("%v: exit %d stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if ss := w.sessions(); len(ss) != 0 {
		t.Errorf("bad usage wrote %v", ss)
	}
}

func TestAgentPromptOnStdin(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "openai", agenttest.Reply{Text: "got it"})
	r := w.run("the prompt\nfrom stdin\n", with(s, "-p")...)
	if r.code != 0 || r.stdout != "got it\n" {
		t.Fatalf("%d %q %q", r.code, r.stdout, r.stderr)
	}
	msgs := s.Messages(s.Requests()[0])
	if last := msgs[len(msgs)-1]; last.Text != "the prompt\nfrom stdin" {
		t.Errorf("prompt sent: %q", last.Text)
	}
}

func TestAgentStartupHintAndNames(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "openai", agenttest.Reply{Text: "1"}, agenttest.Reply{Text: "2"}, agenttest.Reply{Text: "3"}, agenttest.Reply{Text: "4"})
	r := w.run("", with(s, "-p", "-n", "first try", "one")...)
	if strings.Contains(r.stderr, "previous session") {
		t.Errorf("hint without earlier sessions: %q", r.stderr)
	}
	r = w.run("", with(s, "-p", "two")...)
	if !strings.Contains(r.stderr, "\n  (1 previous session(s) for this project — use arbor -c to resume the latest)\n") {
		t.Errorf("hint: %q", r.stderr)
	}
	r = w.run("", with(s, "-p", "three")...)
	if !strings.Contains(r.stderr, "(2 previous session(s) for this project") {
		t.Errorf("hint: %q", r.stderr)
	}
	// The name chooses the session.
	r = w.run("", with(s, "-p", "--session", "first try", "four")...)
	if r.code != 0 {
		t.Fatalf("--session by name: %d %q", r.code, r.stderr)
	}
	var named string
	for _, p := range w.sessions() {
		l, _ := jsonl.Read(p)
		if l.SessionName() == "first try" {
			named = p
		}
	}
	if named == "" || strings.Join(roles(t, named), " ") != "model_change thinking_level_change session_info user assistant user assistant" {
		t.Errorf("named session: %q %v", named, roles(t, named))
	}
}

func TestAgentSessionPathAndID(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "openai", agenttest.Reply{Text: "a"}, agenttest.Reply{Text: "b"}, agenttest.Reply{Text: "c"}, agenttest.Reply{Text: "d"})
	path := filepath.Join(w.home, "elsewhere", "mine.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o755)
	r := w.run("", with(s, "-p", "--session", path, "one")...)
	if r.code != 0 || !strings.Contains(r.stderr, "session: "+path+" (new)") {
		t.Fatalf("--session new path: %d %q", r.code, r.stderr)
	}
	r = w.run("", with(s, "-p", "--session", path, "two")...)
	if r.code != 0 || len(roles(t, path)) != 6 {
		t.Fatalf("--session again: %d %q %v", r.code, r.stderr, roles(t, path))
	}
	id := "0195f1c2-aaaa-7bbb-8ccc-0123456789ab"
	r = w.run("", with(s, "-p", "--session-id", id, "three")...)
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	var withID string
	for _, p := range w.sessions() {
		if strings.HasSuffix(p, "_"+id+".jsonl") {
			withID = p
		}
	}
	if withID == "" {
		t.Fatalf("--session-id made no file named with the id: %v", w.sessions())
	}
	r = w.run("", with(s, "-p", "--session-id", id, "four")...)
	if r.code != 0 || !strings.Contains(r.stderr, "session: "+withID+"\n") || len(roles(t, withID)) != 6 {
		t.Fatalf("--session-id again: %d %q %v", r.code, r.stderr, roles(t, withID))
	}
	if r := w.run("", with(s, "-p", "--session", "no-such-name", "x")...); r.code != 1 || !strings.Contains(r.stderr, "no such session") {
		t.Errorf("unknown --session: %d %q", r.code, r.stderr)
	}
}

func TestAgentSessionDir(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "openai", agenttest.Reply{Text: "a"}, agenttest.Reply{Text: "b"})
	dir := filepath.Join(w.home, "mysessions")
	w.run("", with(s, "-p", "--session-dir", dir, "one")...)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 || len(w.sessions()) != 0 {
		t.Fatalf("--session-dir: %v, default place %v", files, w.sessions())
	}
	r := w.run("", with(s, "-p", "--session-dir", dir, "-c", "two")...)
	if r.code != 0 || len(roles(t, files[0])) != 6 {
		t.Errorf("-c in --session-dir: %d %q", r.code, r.stderr)
	}
}

func TestAgentNoSessionWritesNothing(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "openai",
		agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "bash", Args: `{"command":"seq 1 100000"}`}}},
		agenttest.Reply{Text: "counted"})
	before := snapshot(t, w.home)
	r := w.run("", with(s, "-p", "--no-session", "count")...)
	if r.code != 0 || r.stdout != "counted\n" {
		t.Fatalf("%d %q %q", r.code, r.stdout, r.stderr)
	}
	if after := snapshot(t, w.home); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("--no-session wrote files:\nbefore %v\nafter  %v", before, after)
	}
	if strings.Contains(r.stderr, "session:") {
		t.Errorf("--no-session names a session: %q", r.stderr)
	}
	msgs := s.Messages(s.Requests()[1])
	if res := msgs[len(msgs)-1]; !strings.Contains(res.Text, "arbor blob sha256:") {
		t.Errorf("the big output was not cut: %d bytes", len(res.Text))
	}
}

func snapshot(t *testing.T, root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestAgentCwdWarnings(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "openai", agenttest.Reply{Text: "a"}, agenttest.Reply{Text: "b"}, agenttest.Reply{Text: "c"})
	gone := filepath.Join(w.home, "gone")
	os.MkdirAll(gone, 0o755)
	w.runIn(gone, "", with(s, "-p", "one")...)
	path := w.only()
	os.RemoveAll(gone)
	r := w.run("", with(s, "-p", "--session", path, "two")...)
	want := "arbor: this session was started in " + gone + ", which no longer exists; continuing in " + w.project + "\n"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("folder gone: %d %q, want %q", r.code, r.stderr, want)
	}
	other := filepath.Join(w.home, "other")
	os.MkdirAll(other, 0o755)
	r = w.runIn(other, "", with(s, "-p", "--session", path, "three")...)
	want = "arbor: this session was started in " + gone + ", which no longer exists; continuing in " + other + "\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("second warning: %q", r.stderr)
	}
	// A folder that still exists.
	s.Add(agenttest.Reply{Text: "d"}, agenttest.Reply{Text: "e"})
	w2 := newWorld(t)
	w2.run("", with(s, "-p", "one")...)
	p2 := w2.only()
	r = w2.runIn(w2.home, "", with(s, "-p", "--session", p2, "two")...)
	want = "arbor: this session was started in " + w2.project + "; continuing in " + w2.home + " (tools now work here)\n"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("different folder: %d %q, want %q", r.code, r.stderr, want)
	}
}
