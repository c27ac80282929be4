package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
)

// TestServeCommand runs arbor serve as a user does: the model from the
// flags, sessions under $ARBOR_DIR, JSON lines in and out.
func TestServeCommand(t *testing.T) {
	w := newWorld(t)
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "hello from the model"})
	cmd := w.cmd("", append([]string{"serve"}, with(fake)...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("not JSON: %q", sc.Text())
			}
			lines <- m
		}
		close(lines)
	}()
	next := func() map[string]any {
		select {
		case m := <-lines:
			return m
		case <-time.After(20 * time.Second):
			t.Fatal("no answer from arbor serve")
		}
		return nil
	}
	if m := next(); m["method"] != "ready" {
		t.Fatalf("first line %v", m)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"hi"}}`+"\n")
	var got map[string]any
	for got == nil {
		if m := next(); m["id"] != nil {
			got = m
		}
	}
	if r, _ := got["result"].(map[string]any); r["reply"] != "hello from the model" {
		t.Fatalf("prompt: %v", got)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"listSessions"}`+"\n")
	ls := next()
	ss := ls["result"].(map[string]any)["sessions"].([]any)
	if len(ss) != 1 || ss[0].(map[string]any)["path"] != w.only() {
		t.Errorf("listSessions %v, files %v", ls, w.sessions())
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("arbor serve at the end of its input: %v", err)
	}
}

func TestRPCModeUsage(t *testing.T) {
	w := newWorld(t)
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "piped answer"})
	// Requests piped in are all answered before arbor serve ends.
	r := w.run(`{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"hi"}}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"getState"}`+"\n"+"not json\n",
		with(fake, "serve")...)
	if r.code != 0 || !strings.Contains(r.stdout, `"id":1,"result":{"reply":"piped answer"}`) || !strings.Contains(r.stdout, `"id":2,"result"`) ||
		!strings.Contains(r.stdout, `"code":-32700`) {
		t.Errorf("piped arbor serve: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := w.run("", "serve", "--listen", "tcp:0.0.0.0:7000"); r.code != 2 || !strings.Contains(r.stderr, "loopback") {
		t.Errorf("--listen on every interface: %d %q", r.code, r.stderr)
	}
	r = w.run("", with(fake, "--mode", "rpc", "-p", "hi")...)
	if r.code != 2 || !strings.Contains(r.stderr, "--mode rpc") {
		t.Errorf("--mode rpc -p: %d %q", r.code, r.stderr)
	}
	r = w.run(`{"id":"a","type":"get_state"}`+"\n"+`{"type":"nope"}`, with(fake, "--mode", "rpc")...)
	if r.code != 0 {
		t.Fatalf("--mode rpc: %d %s", r.code, r.stderr)
	}
	got := strings.Split(strings.TrimSpace(r.stdout), "\n")
	defer func() {
		// -c and --session open the session a prompt wrote.
		w := newWorld(t)
		fake.Add(agenttest.Reply{Text: "kept"})
		r := w.run(`{"id":"p","type":"prompt","message":"remember"}`+"\n", with(fake, "--mode", "rpc")...)
		if r.code != 0 || !strings.Contains(r.stdout, "agent_settled") {
			t.Fatalf("prompt over --mode rpc: %d %s %s", r.code, r.stdout, r.stderr)
		}
		path := w.only()
		for _, args := range [][]string{{"-c"}, {"--session", path}} {
			r := w.run(`{"id":"s","type":"get_state"}`+"\n", with(fake, append([]string{"--mode", "rpc"}, args...)...)...)
			// The end of stdin aborted the prompt, as pi's does; the prompt is kept.
			if strings.Contains(r.stdout, `"messageCount":0`) || !strings.Contains(r.stdout, `"sessionFile":"`+path+`"`) {
				t.Errorf("--mode rpc %v: %s %s", args, r.stdout, r.stderr)
			}
		}
		if r := w.run("", with(fake, "--mode", "rpc", "--no-session")...); r.code != 2 {
			t.Errorf("--mode rpc --no-session: %d %s", r.code, r.stderr)
		}
	}()
	if len(got) != 2 || !strings.Contains(got[0], `"command":"get_state","success":true`) ||
		!strings.Contains(got[1], `"error":"Unknown command: nope"`) {
		t.Errorf("--mode rpc answered %s", fmt.Sprint(got))
	}
}
