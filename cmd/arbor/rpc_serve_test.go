package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
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

// TestServeTCPToken starts arbor serve on a TCP port as a user does: it
// writes a token only its user can read, says where (never the token), and
// serves only the client that sends it first.
func TestServeTCPToken(t *testing.T) {
	w := newWorld(t)
	fake := agenttest.New(t, "openai")
	cmd := w.cmd("", with(fake, "serve", "--listen", "tcp:127.0.0.1:0")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	var addr, file, said string
	for (addr == "" || file == "") && sc.Scan() {
		said += sc.Text() + "\n"
		if a, ok := strings.CutPrefix(sc.Text(), "listening on tcp:"); ok {
			addr = a
		}
		if f, ok := strings.CutPrefix(sc.Text(), "token in "); ok {
			file, _, _ = strings.Cut(f, ": ")
		}
	}
	if addr == "" || file == "" {
		t.Fatalf("arbor serve said %q, want the address and the token's file", said)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 || filepath.Dir(file) != filepath.Join(w.home, "arbor") {
		t.Fatalf("token file %s: %v %v, want mode 0600 in $ARBOR_DIR", file, fi, err)
	}
	b, _ := os.ReadFile(file)
	token := strings.TrimSpace(string(b))
	if len(token) != 64 || strings.Contains(said, token) {
		t.Fatalf("token %q (printed: %v), want 64 hex digits, not printed", token, strings.Contains(said, token))
	}
	ask := func(first string) string {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, first+"\n"+`{"jsonrpc":"2.0","id":2,"method":"getState"}`+"\n")
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(conn)
		var got string
		for range 3 {
			l, err := br.ReadString('\n')
			got += l
			if err != nil || strings.Contains(l, `"id":2`) {
				break
			}
		}
		return got
	}
	if got := ask(`{"jsonrpc":"2.0","id":1,"method":"getState"}`); !strings.Contains(got, `"id":1,"error":{"code":-32001`) || strings.Contains(got, `"id":2`) {
		t.Errorf("without the token: %q", got)
	}
	got := ask(`{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"token":"` + token + `"}}`)
	if !strings.Contains(got, `"id":1,"result":{}`) || !strings.Contains(got, `"method":"ready"`) || !strings.Contains(got, `"id":2,"result"`) {
		t.Errorf("with the token: %q", got)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the token file is left after the server stopped: %v", err)
	}
}
