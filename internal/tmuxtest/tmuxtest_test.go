package tmuxtest

import (
	"strings"
	"testing"
	"time"
)

func TestServer(t *testing.T) {
	s := New(t)
	s.Run("new-session", "-d", "-x", "40", "-y", "5", "sh", "-c", "printf 'hello from tmux'; sleep 30")
	var screen string
	if !Until(5*time.Second, func() bool { screen = s.Run("capture-pane", "-p"); return strings.Contains(screen, "hello from tmux") }) {
		t.Fatalf("the window shows %q", screen)
	}
	if _, err := s.Try("no-such-command"); err == nil {
		t.Error("a bad tmux command did not fail")
	}
}
