package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
)

// listenTCP serves cfg on a loopback port with token and returns its address.
func listenTCP(t *testing.T, cfg Config, token string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, cfg, "tcp:127.0.0.1:0", ListenOptions{Token: token, Ready: func(a net.Addr) { listening <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	select {
	case a := <-listening:
		return a.String()
	case err := <-done:
		t.Fatalf("Listen: %v", err)
	}
	return ""
}

// rawLines dials addr, sends lines and returns every line the server wrote
// until it closed the connection or went quiet for a second.
func rawLines(t *testing.T, addr string, lines ...string) []map[string]any {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, l := range lines {
		if _, err := io.WriteString(conn, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var out []map[string]any
	br := bufio.NewReader(conn)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var m map[string]any
			if jerr := json.Unmarshal(line, &m); jerr != nil {
				t.Fatalf("not JSON: %q", line)
			}
			out = append(out, m)
		}
		if err != nil {
			return out
		}
	}
}

func TestListenTCPNeedsTheToken(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	const token = "0123456789abcdef"
	addr := listenTCP(t, cfg, token)
	state := `{"jsonrpc":"2.0","id":7,"method":"getState"}`

	refused := func(what string, got []map[string]any, id any) {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("%s: got %v, want one refusal and the connection closed", what, got)
		}
		e, _ := got[0]["error"].(map[string]any)
		if e == nil || e["code"] != float64(ErrUnauthenticated) || got[0]["id"] != id {
			t.Fatalf("%s: got %v, want error %d with id %v", what, got[0], ErrUnauthenticated, id)
		}
	}
	refused("no token", rawLines(t, addr, state, state), float64(7))
	refused("wrong token", rawLines(t, addr, `{"jsonrpc":"2.0","id":"a","method":"authenticate","params":{"token":"0123456789abcdeX"}}`, state), "a")
	refused("token in a later request", rawLines(t, addr, `{"jsonrpc":"2.0","method":"getState"}`,
		`{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"token":"`+token+`"}}`), nil)

	got := rawLines(t, addr, `{"jsonrpc":"2.0","id":"a","method":"authenticate","params":{"token":"`+token+`"}}`, state)
	if len(got) != 3 || got[0]["id"] != "a" || got[0]["error"] != nil || got[1]["method"] != "ready" || got[2]["id"] != float64(7) || got[2]["result"] == nil {
		t.Fatalf("with the token: got %v, want authenticate answered, ready, then getState answered", got)
	}

	if err := Listen(context.Background(), cfg, "tcp:127.0.0.1:0", ListenOptions{}); err == nil {
		t.Error("Listen on tcp without a token was accepted")
	}
}

func TestListenUnixSocketIsPrivate(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	ctx, cancel := context.WithCancel(context.Background())
	mode := make(chan os.FileMode, 1)
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, cfg, "unix:"+sock, ListenOptions{Ready: func(net.Addr) {
			fi, err := os.Stat(sock)
			if err != nil {
				t.Error(err)
			}
			mode <- fi.Mode().Perm()
		}})
	}()
	if m := <-mode; m != 0o600 {
		t.Errorf("the socket is %04o, want 0600", m)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in the folder: %v", left)
	}
	if err := os.WriteFile(sock, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Listen(context.Background(), cfg, "unix:"+sock, ListenOptions{}); err == nil {
		t.Error("a socket replaced a file")
	}
	if b, _ := os.ReadFile(sock); string(b) != "mine" {
		t.Errorf("the file at the socket's path became %q", b)
	}
}
