package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/internal/tmuxtest"
)

// TestRealTerminal runs the arbor binary in a tmux window 90 columns wide:
// on the terminal arbor colours its output and cuts lines to the window,
// with NO_COLOR set it does not colour, and piped it neither colours nor
// reads the window's width.
func TestRealTerminal(t *testing.T) {
	term := tmuxtest.New(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "arbor")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/arborlog/arbor/cmd/arbor").CombinedOutput(); err != nil {
		t.Fatalf("build arbor: %v\n%s", err, out)
	}
	session, err := filepath.Abs("../../examples/refactor.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	run := func(name, shell string) string {
		t.Helper()
		done := filepath.Join(dir, name+".done")
		term.Run("new-session", "-d", "-s", name, "-x", "90", "-y", "40", "sh", "-c",
			"env ARBOR_DIR="+dir+" TERM=xterm-256color "+shell+"; touch "+done+"; sleep 30")
		if !tmuxtest.Until(20*time.Second, func() bool { _, err := os.Stat(done); return err == nil }) {
			t.Fatalf("%s did not finish:\n%s", shell, term.Run("capture-pane", "-p", "-t", name))
		}
		return term.Run("capture-pane", "-p", "-e", "-t", name)
	}
	const sgr = "\x1b["
	tree := bin + " tree " + session
	coloured := run("colour", "env -u NO_COLOR "+tree)
	if !strings.Contains(coloured, sgr) || !strings.Contains(coloured, "c07e5a13") {
		t.Errorf("arbor tree on a terminal is not coloured:\n%q", coloured)
	}
	plain := run("nocolor", "NO_COLOR=1 "+tree)
	if strings.Contains(plain, sgr) || !strings.Contains(plain, "c07e5a13") {
		t.Errorf("arbor tree with NO_COLOR set is coloured, or empty:\n%q", plain)
	}
	// The first user message is longer than the window: cut to 90 columns on
	// the terminal, to 100 (the width when there is none) through a pipe.
	piped := run("piped", "env -u NO_COLOR "+tree+" | cat")
	if strings.Contains(piped, sgr) {
		t.Errorf("arbor tree through a pipe is coloured:\n%q", piped)
	}
	for _, tc := range []struct {
		screen string
		cut    string
	}{{plain, `("3d") to timeparse. Can …`}, {piped, "\nou find o…"}} { // tmux wraps the piped line at 90
		if !strings.Contains(tc.screen, tc.cut) {
			t.Errorf("the first message is not cut as %q:\n%s", tc.cut, tc.screen)
		}
	}
}
