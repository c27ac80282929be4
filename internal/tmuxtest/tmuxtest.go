// Package tmuxtest gives a test a tmux server of its own, to run programs on
// a real terminal: tmux is the terminal, and capture-pane shows what was drawn.
// Tests skip when tmux is not installed (.ci/run installs it).
package tmuxtest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is a tmux server on a socket of the test's own, without the user's
// configuration; the test's cleanup kills it.
type Server struct {
	t    testing.TB
	sock string
}

// New starts nothing yet: the first session starts the server.
func New(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	s := &Server{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	return s
}

// Try runs a tmux command and returns its output and error.
func (s *Server) Try(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", s.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	return string(out), err
}

// Run runs a tmux command; the test fails if it does.
func (s *Server) Run(args ...string) string {
	s.t.Helper()
	out, err := s.Try(args...)
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Until calls f every 50 ms until it returns true or the time is up; it
// reports whether f did.
func Until(within time.Duration, f func() bool) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return f()
}
