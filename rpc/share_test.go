package rpc

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session/jsonl"
)

// Two servers on one session: the second writer is refused with the holder
// named; a follower reads what the writer appends, every entry once, in order.
func TestServeSharedSession(t *testing.T) {
	home := t.TempDir()
	var replies []agenttest.Reply
	for i := range 8 {
		replies = append(replies, agenttest.Reply{Text: fmt.Sprintf("answer %d", i)})
	}
	fake := agenttest.New(t, "openai", replies...)
	writer := startServe(t, testConfig(t, fake, home))
	result(t, first(writer.call("prompt", map[string]any{"message": "start"})))
	path := result(t, first(writer.call("getState", nil)))["sessionFile"].(string)

	other := startServe(t, testConfig(t, fake, home))
	e := errorOf(t, first(other.call("resumeSession", map[string]any{"path": path})), -32603)
	data := e["data"].(map[string]any)
	if data["reason"] != "locked" || int(data["holder"].(map[string]any)["pid"].(float64)) != os.Getpid() ||
		!strings.Contains(fmt.Sprint(e["message"]), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("second writer: %v", e)
	}

	follower := other
	r := result(t, first(follower.call("resumeSession", map[string]any{"path": path, "readOnly": true})))
	if r["entryCount"].(float64) < 3 {
		t.Errorf("follower resumed %v", r)
	}
	errorOf(t, first(follower.call("prompt", map[string]any{"message": "may I?"})), -32602)

	var seen []string
	since := ""
	grew := 0 // polls that found new entries
	poll := func() {
		n := len(seen)
		defer func() {
			if len(seen) > n {
				grew++
			}
		}()
		p := map[string]any{}
		if since != "" {
			p["since"] = since
		}
		for _, en := range result(t, first(follower.call("getEntries", p)))["entries"].([]any) {
			id := en.(map[string]any)["id"].(string)
			seen = append(seen, id)
			since = id
		}
	}
	poll()
	// The writer appends while the follower polls.
	done := make(chan []any)
	go func() {
		var replies []any
		for i := range 7 {
			resp, _ := writer.call("prompt", map[string]any{"message": fmt.Sprintf("more %d", i)})
			replies = append(replies, resp["result"])
		}
		done <- replies
	}()
	polls := 0
	for running := true; running; polls++ {
		select {
		case got := <-done:
			for i, r := range got {
				if r == nil || r.(map[string]any)["reply"] != fmt.Sprintf("answer %d", i+1) {
					t.Errorf("prompt %d: %v", i, r)
				}
			}
			running = false
		default:
			poll()
		}
	}
	if grew < 3 {
		t.Errorf("the follower found new entries in %d of %d polls: it did not follow the writer", grew, polls)
	}
	poll()
	l, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, en := range l.Entries() {
		want = append(want, en.ID)
	}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("the follower saw\n%v\nthe file holds\n%v", seen, want)
	}
}

// TestListenClients serves two clients on a unix socket: each has its own
// session, the second cannot write the first's, and can follow it.
func TestListenClients(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "one"}, agenttest.Reply{Text: "two"})
	cfg := testConfig(t, fake, t.TempDir())
	sock := filepath.Join(t.TempDir(), "arbor.sock")
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, cfg, "unix:"+sock, ListenOptions{Ready: func(a net.Addr) { listening <- a }})
	}()
	<-listening
	dial := func() *client {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return newClient(t, conn, conn)
	}
	a, b := dial(), dial()
	result(t, first(a.call("prompt", map[string]any{"message": "first"})))
	path := result(t, first(a.call("getState", nil)))["sessionFile"].(string)
	if other := result(t, first(b.call("getState", nil)))["sessionFile"]; other == path {
		t.Errorf("two clients share a session: %s", path)
	}
	errorOf(t, first(b.call("resumeSession", map[string]any{"path": path})), -32603)
	result(t, first(b.call("resumeSession", map[string]any{"path": path, "readOnly": true})))
	n := len(result(t, first(b.call("getEntries", nil)))["entries"].([]any))
	result(t, first(a.call("prompt", map[string]any{"message": "second"})))
	if m := len(result(t, first(b.call("getEntries", nil)))["entries"].([]any)); m != n+2 {
		t.Errorf("the follower had %d entries, then %d: want the prompt and reply more", n, m)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is left behind: %v", err)
	}
	for _, bad := range []string{"tcp:0.0.0.0:7000", "tcp:example.com:80", "udp:x", "unix:"} {
		if err := Listen(context.Background(), cfg, bad, ListenOptions{Token: "t"}); err == nil {
			t.Errorf("Listen(%q) accepted", bad)
		}
	}
}
