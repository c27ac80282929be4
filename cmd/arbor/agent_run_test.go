package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session/jsonl"
)

func TestAgentToolCallsSplitAcrossChunks(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			s := agenttest.New(t, kind,
				agenttest.Reply{Text: "Writing.", Chunk: 2, Calls: []agenttest.Call{
					{ID: "call_1", Name: "write", Args: `{"path":"notes/hello.txt","content":"hi from the agent\n"}`},
					{ID: "call_2", Name: "bash", Args: `{"command":"cat notes/hello.txt; echo AKIAIOSFODNN7EXAMPLE"}`},
				}},
				agenttest.Reply{Text: "Done: the file is written."})
			r := w.run("", with(s, "-p", "write a note")...)
			if r.code != 0 || r.stdout != "Done: the file is written.\n" {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if data, _ := os.ReadFile(filepath.Join(w.project, "notes", "hello.txt")); string(data) != "hi from the agent\n" {
				t.Errorf("file written: %q", data)
			}
			reqs := s.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			msgs := s.Messages(reqs[1])
			n := len(msgs)
			if n < 4 {
				t.Fatalf("second request: %+v", msgs)
			}
			asst, res1, res2 := msgs[n-3], msgs[n-2], msgs[n-1]
			if asst.Role != "assistant" || len(asst.Calls) != 2 || asst.Calls[0].Args != `{"content":"hi from the agent\n","path":"notes/hello.txt"}` && asst.Calls[0].Args != `{"path":"notes/hello.txt","content":"hi from the agent\n"}` {
				t.Errorf("assistant sent back: %+v", asst)
			}
			if res1.ID != "call_1" || !strings.Contains(res1.Text, "Successfully wrote 18 bytes") {
				t.Errorf("first result: %+v", res1)
			}
			if res2.ID != "call_2" || res2.Text != "hi from the agent\n[REDACTED:aws-access-key]\n" {
				t.Errorf("second result (redacted): %+v", res2)
			}
			path := w.only()
			if got := strings.Join(roles(t, path), " "); got != "model_change thinking_level_change user assistant toolResult toolResult assistant" {
				t.Errorf("entries: %s", got)
			}
			ms := messageData(t, path)
			if ms[1].StopReason != "toolUse" || len(ms[1].Content.Blocks) != 3 || string(ms[1].Content.Blocks[2].Arguments) != `{"command":"cat notes/hello.txt; echo AKIAIOSFODNN7EXAMPLE"}` {
				t.Errorf("assistant with calls: %+v", ms[1])
			}
			if !strings.Contains(string(ms[3].Details), `"arborRedacted":1`) {
				t.Errorf("redaction not counted: %s", ms[3].Details)
			}
			st := w.run("", "stats", path)
			if !strings.Contains(st.stdout, "redacted       1 secret removed from tool output") {
				t.Errorf("arbor stats does not count redactions:\n%s", st.stdout)
			}
		})
	}
}

func TestAgentRetries(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			s := agenttest.New(t, kind,
				agenttest.Reply{Status: 429, RetryAfter: "1"},
				agenttest.Reply{Status: 500},
				agenttest.Reply{Text: "third time lucky"})
			r := w.run("", with(s, "-p", "hi")...)
			if r.code != 0 || r.stdout != "third time lucky\n" {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			reqs := s.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			if gap := reqs[1].Time.Sub(reqs[0].Time); gap < 900*time.Millisecond {
				t.Errorf("Retry-After: 1 not honoured: retried after %s", gap)
			}
			// Each wait is said on stderr, with attempts counted from the first request.
			for _, line := range []string{"arbor: retrying in 1.0 s after 429 Too Many Requests (attempt 2 of 4)\n",
				"arbor: retrying in 1.0 s after 500 Internal Server Error (attempt 3 of 4)\n"} {
				if !strings.Contains(r.stderr, line) {
					t.Errorf("stderr does not say %q:\n%s", line, r.stderr)
				}
			}
		})
	}
}

func TestAgentClientError(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			body := `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`
			if kind == "anthropic" {
				body = `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`
			}
			s := agenttest.New(t, kind, agenttest.Reply{Status: 401, Body: body})
			r := w.run("", with(s, "-p", "hi")...)
			want := map[string]string{"openai": "arbor: openai: 401 Unauthorized: Incorrect API key provided\n", "anthropic": "arbor: anthropic: 401 Unauthorized: invalid x-api-key\n"}[kind]
			if r.code != 1 || !strings.HasSuffix(r.stderr, want) || r.stdout != "" {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if len(s.Requests()) != 1 {
				t.Errorf("a 4xx was retried: %d requests", len(s.Requests()))
			}
			s.Add(agenttest.Reply{Status: 401, Body: body})
			r = w.run("", with(s, "-p", "--mode", "json", "hi")...)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if r.code != 1 || !strings.HasPrefix(lines[len(lines)-2], `{"type":"arbor_error","errorMessage":"`+kind+`: 401 Unauthorized: `) ||
				lines[len(lines)-1] != `{"type":"agent_settled","aborted":false}` {
				t.Errorf("json mode error event: %d %q", r.code, lines[len(lines)-2:])
			}
			ms := messageData(t, w.sessions()[0])
			if last := ms[len(ms)-1]; last.StopReason != "error" || !strings.Contains(last.ErrorMessage, "401") {
				t.Errorf("error not kept on the assistant message: %+v", last)
			}
		})
	}
}

func (w *world) config(cfg string) {
	w.t.Helper()
	dir := filepath.Join(w.home, "arbor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func TestAgentStalledStream(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			s := agenttest.New(t, kind, agenttest.Reply{Stall: true})
			w.config(`{"provider":"fake","model":"fake-model","providers":{"fake":{"type":"` + kind + `","baseUrl":"` + s.BaseURL() + `","idleTimeoutSeconds":1,"maxRetries":-1}}}`)
			start := time.Now()
			r := w.run("", "-p", "hi")
			if r.code != 1 || !strings.Contains(r.stderr, "the provider stopped sending: nothing received for 1s") {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}

func TestAgentMissingSettings(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"-p", "hi"}, nil, `arbor: no model chosen: set --model, ARBOR_MODEL, or "model" in ` + filepath.Join(w.home, "arbor", "config.json") + "\n"},
		{[]string{"-p", "hi", "--model", "m"}, []string{"ARBOR_API_KEY="}, "arbor: no API key: set ARBOR_API_KEY (or OPENAI_API_KEY), or point --base-url / ARBOR_MODEL_BASE_URL at a server that needs none\n"},
		{[]string{"-p", "hi", "--model", "m", "--provider", "anthropic"}, []string{"ARBOR_API_KEY="}, "arbor: no API key: set ARBOR_API_KEY (or ANTHROPIC_API_KEY), or point --base-url / ARBOR_MODEL_BASE_URL at a server that needs none\n"},
		{[]string{"-p", "hi", "--model", "m", "--api-key-env", "MY_KEY"}, nil, "arbor: no API key: the variable MY_KEY is empty; set it, or name another with --api-key-env\n"},
		{[]string{"-p", "hi", "--model", "m", "--provider", "gemini"}, nil, `arbor: unknown provider "gemini": use openai or anthropic, or a name from "providers" in ` + filepath.Join(w.home, "arbor", "config.json") + "\n"},
	} {
		ww := *w
		ww.env = append(append([]string(nil), w.env...), tc.env...)
		r := ww.run("", tc.args...)
		if r.code != 1 || r.stderr != tc.want {
			t.Errorf("%v: exit %d stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if ss := w.sessions(); len(ss) != 0 {
		t.Errorf("a run that could not start wrote %v", ss)
	}
}

func TestAgentJSONMode(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "openai",
		agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "ls", Args: `{}`}}},
		agenttest.Reply{Text: "ok"})
	r := w.run("", with(s, "-p", "--mode", "json", "--tools", "ls", "look")...)
	if r.code != 0 {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e struct{ Type string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if e.Type != "message_update" {
			types = append(types, e.Type)
		}
	}
	want := "session agent_start turn_start message_start message_end message_start message_end tool_execution_start tool_execution_end turn_end turn_start message_start message_end turn_end agent_end agent_settled"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	tools, _ := s.Requests()[0].Body["tools"].([]any)
	if len(tools) != 1 {
		t.Errorf("--tools ls offered %d tools", len(tools))
	}
}

func TestAgentAbortThenContinue(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			s := agenttest.New(t, kind,
				agenttest.Reply{Text: "first answer"},
				agenttest.Reply{Text: "a partial ans", Stall: true})
			if r := w.run("", with(s, "-p", "one")...); r.code != 0 {
				t.Fatalf("first run: %d %q", r.code, r.stderr)
			}
			c := w.cmd("", with(s, "-c", "-p", "two")...)
			var out, errb strings.Builder
			c.Stdout, c.Stderr = &out, &errb
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			for len(s.Requests()) < 2 {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			c.Process.Signal(syscall.SIGINT)
			err := c.Wait()
			// Ctrl-C prints the reply so far, as a finished run prints its answer.
			if c.ProcessState.ExitCode() != 1 || out.String() != "a partial ans\n" ||
				!strings.HasSuffix(errb.String(), "arbor: interrupted; the partial reply is kept (continue with arbor -c)\n") {
				t.Fatalf("abort: %v, stdout %q, stderr %q", err, out.String(), errb.String())
			}
			path := w.only()
			ms := messageData(t, path)
			if last := ms[len(ms)-1]; last.Role != "assistant" || last.StopReason != "aborted" || last.Content.Text("") != "a partial ans" {
				t.Fatalf("last message after abort: %+v", last)
			}
			s.Add(agenttest.Reply{Text: "third answer"})
			r := w.run("", with(s, "-c", "-p", "three")...)
			if r.code != 0 || r.stdout != "third answer\n" {
				t.Fatalf("after abort: %d %q %q", r.code, r.stdout, r.stderr)
			}
			msgs := s.Messages(s.Requests()[2])
			var got []string
			for _, m := range msgs {
				if m.Role != "system" {
					got = append(got, m.Role+":"+m.Text)
				}
			}
			if strings.Join(got, "|") != "user:one|assistant:first answer|user:two|user:three" {
				t.Errorf("history after the abort: %q", got)
			}
		})
	}
}

func TestAgentContinueAndFork(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "openai", agenttest.Reply{Text: "A1"}, agenttest.Reply{Text: "A2"}, agenttest.Reply{Text: "F1"})
	w.run("", with(s, "-p", "Q1")...)
	first := w.only()
	r := w.run("", with(s, "-c", "-p", "Q2")...)
	if r.code != 0 || !strings.Contains(r.stderr, "session: "+first) {
		t.Fatalf("continue: %d %q", r.code, r.stderr)
	}
	texts := func(i int) string { return history(s, i) }
	if got := texts(1); got != "Q1 A1 Q2" {
		t.Errorf("history after -c: %q", got)
	}
	if r := w.run("", "name", first, "mine"); r.code != 0 {
		t.Fatalf("name: %d %q", r.code, r.stderr)
	}
	other := filepath.Join(w.home, "other")
	os.MkdirAll(other, 0o755)
	r = w.runIn(other, "", with(s, "--fork", first, "-p", "QF")...)
	if r.code != 0 || !strings.Contains(r.stderr, "(forked from "+first+")") {
		t.Fatalf("fork: %d %q", r.code, r.stderr)
	}
	// The fork is a new session: the name finds the source alone.
	if r := w.run("", "info", "mine", "--json"); r.code != 0 || !strings.Contains(r.stdout, first) {
		t.Errorf("info mine after --fork: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if got := texts(2); got != "Q1 A1 Q2 A2 QF" {
		t.Errorf("history after --fork: %q", got)
	}
	var forked string
	for _, p := range w.sessions() {
		if p != first {
			forked = p
		}
	}
	l, err := jsonl.Read(forked)
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Header(); h.ParentSession != first || h.Cwd != other {
		t.Errorf("forked header: %+v", h)
	}
	if n := l.SessionName(); n != "" {
		t.Errorf("the fork kept its source's name %q", n)
	}
	if got := strings.Join(roles(t, first), " "); got != "model_change thinking_level_change user assistant user assistant session_info" {
		t.Errorf("the source changed: %s", got)
	}
}

func TestAgentAbortDuringTool(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "anthropic", agenttest.Reply{Calls: []agenttest.Call{
		{ID: "toolu_1", Name: "bash", Args: `{"command":"echo begun; sleep 30"}`},
		{ID: "toolu_2", Name: "bash", Args: `{"command":"echo never"}`},
	}})
	c := w.cmd("", with(s, "-p", "long job")...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ss := w.sessions(); len(ss) == 1 && strings.Contains(strings.Join(roles(t, ss[0]), " "), "assistant") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tool call never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	c.Process.Signal(syscall.SIGINT)
	c.Wait()
	if time.Since(start) > 5*time.Second || c.ProcessState.ExitCode() != 1 {
		t.Fatalf("abort took %s, exit %d", time.Since(start), c.ProcessState.ExitCode())
	}
	ms := messageData(t, w.only())
	if len(ms) != 4 || ms[2].ToolCallID != "toolu_1" || !ms[2].IsError || !strings.Contains(ms[2].Content.Text("\n"), "begun\n\n\nCommand aborted") ||
		ms[3].ToolCallID != "toolu_2" || !strings.Contains(ms[3].Content.Text("\n"), "Skipped") {
		t.Fatalf("messages after an abort mid-tool: %+v", ms)
	}
	s.Add(agenttest.Reply{Text: "ok"})
	if r := w.run("", with(s, "-p", "-c", "go on")...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	validRequest(t, s, s.Requests()[1])
}

func TestAgentBadToolArguments(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			s := agenttest.New(t, kind,
				agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "write", Args: `{"path":"x.txt","content":"unterminated`}}},
				agenttest.Reply{Text: "sorry"})
			if r := w.run("", with(s, "-p", "write")...); r.code != 0 {
				t.Fatal(r.stderr)
			}
			msgs := s.Messages(s.Requests()[1])
			res := msgs[len(msgs)-1]
			if !strings.Contains(res.Text, "the arguments of this call were not valid JSON") || !strings.Contains(res.Text, `"content":"unterminated`) {
				t.Errorf("result: %+v", res)
			}
			if _, err := os.Stat(filepath.Join(w.project, "x.txt")); err == nil {
				t.Errorf("a call with broken arguments wrote a file")
			}
		})
	}
}
