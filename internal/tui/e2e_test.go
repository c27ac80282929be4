package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session/jsonl"
)

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	binary    string
	buildErr  error
)

// arborBinary builds cmd/arbor once for the end-to-end tests.
func arborBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arbor-tui-e2e")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		binary = filepath.Join(dir, "arbor")
		cmd := exec.Command("go", "build", "-o", binary, "github.com/arborlog/arbor/cmd/arbor")
		cmd.Env = startEnv // not the fixture's HOME, or go starts with empty caches
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = err
			binary = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build arbor: %v\n%s", buildErr, binary)
	}
	return binary
}

// terminal is a tmux server of its own running arbor with args in a 120×35
// window, in the fixture's working folder.
type terminal struct {
	t    *testing.T
	sock string
}

func startTerminal(t *testing.T, f *fixture, env []string, args ...string) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	bin := arborBinary(t)
	term := &terminal{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	vars := append([]string{"ARBOR_DIR=" + f.arbor, "PI_CODING_AGENT_DIR=" + f.pi, "HOME=" + filepath.Dir(f.arbor), "TERM=xterm-256color"}, env...)
	cmd := "env " + shellJoin(vars) + " " + shellJoin(append([]string{bin}, args...)) + "; echo EXIT=$?; sleep 30"
	term.tmux("new-session", "-d", "-x", "120", "-y", "35", "-c", f.work, "sh", "-c", cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", term.sock, "kill-server").Run() })
	return term
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func (term *terminal) tmux(args ...string) string {
	term.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", term.sock}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, C-r, Up).
func (term *terminal) keys(keys ...string) {
	term.t.Helper()
	for _, k := range keys {
		term.tmux("send-keys", k)
	}
}

// text types literally.
func (term *terminal) text(s string) {
	term.t.Helper()
	term.tmux("send-keys", "-l", s)
}

func (term *terminal) screen(escapes bool) string {
	term.t.Helper()
	args := []string{"capture-pane", "-p"}
	if escapes {
		args = append(args, "-e")
	}
	return term.tmux(args...)
}

// waitFor waits until the screen shows want.
func (term *terminal) waitFor(want string) string {
	term.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := term.screen(false)
		if strings.Contains(s, want) {
			term.t.Logf("%s: %q", time.Since(deadline.Add(-15*time.Second)).Round(time.Millisecond), want)
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the screen never showed %q:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitGone waits until the screen no longer shows gone (what is drawn in the
// background may lag what the status line says); it fails with why.
func (term *terminal) waitGone(gone, why string) string {
	term.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := term.screen(false)
		if !strings.Contains(s, gone) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("%s:\n%s", why, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowseInTmux drives `arbor browse` as a user would: search, rename,
// open a tree, branch with a mechanical summary, go back, delete to the trash
// after confirming, restore, the key help, and quit; the files are checked
// after each write.
func TestBrowseInTmux(t *testing.T) {
	f := newFixture(t)
	term := startTerminal(t, f, nil, "browse", "--all")
	term.waitFor("Sessions (All)")
	term.waitFor("context heading") // a session pi wrote

	term.text("Fix day units")
	term.waitFor("Search: Fix day units")
	s := term.waitGone("context heading", "the search did not filter")
	// The fork shares the example's messages, so it matches too, and it is
	// listed first (pi 1.6.0's order: the later file first); pick the example.
	if !strings.Contains(s, "› Fix day units") {
		term.keys("Down")
		term.waitFor("› Fix day units")
	}
	term.keys("C-r", "C-u")
	term.text("day units")
	term.keys("Enter")
	term.waitFor("› day units")
	if l, err := jsonl.Read(f.example); err != nil || l.SessionName() != "day units" {
		t.Fatalf("after rename: name %q, %v", l.SessionName(), err)
	}

	term.keys("Enter")
	term.waitFor("Session tree day units")
	term.keys("Up", "Up", "Enter")
	term.waitFor("Summarize the branch you leave?")
	term.keys("Down", "Enter")
	term.waitFor("the leaf is now")
	l, err := jsonl.Read(f.example)
	if err != nil {
		t.Fatal(err)
	}
	if leaf := l.Leaf(); leaf.Type != "branch_summary" || leaf.ParentID != "7eab1248" {
		t.Fatalf("after the branch the leaf is %s (%s under %s), want a branch_summary under 7eab1248", leaf.ID, leaf.Type, leaf.ParentID)
	}
	// The tree is read again in the background after the write: wait for it to show the new leaf.
	s = term.waitFor("› " + l.Leaf().ID)
	if !strings.Contains(s, "[branch summary]: ## Activity") {
		t.Errorf("the tree does not show the new leaf's summary:\n%s", s)
	}

	term.keys("Escape")
	term.waitFor("Sessions (All)")
	term.keys("Escape") // clears the search
	term.waitFor("context heading")
	term.keys("Home", "C-d")
	term.waitFor("to the trash? y to confirm")
	term.keys("y")
	term.waitFor("to the trash; ctrl+z restores it")
	if _, err := os.Stat(f.example); !os.IsNotExist(err) {
		t.Fatalf("the session is still in place after delete: %v", err)
	}
	cat := catalog.Open(f.arbor)
	trash, err := cat.Trash()
	cat.Close()
	if err != nil || len(trash) != 1 || trash[0].Path != f.example {
		t.Fatalf("trash %+v, %v", trash, err)
	}
	term.keys("C-z")
	term.waitFor("restored")
	term.waitFor("› day units")
	if _, err := jsonl.Read(f.example); err != nil {
		t.Fatalf("not restored: %v", err)
	}

	term.text("?")
	term.waitFor("Keys of the session picker")
	term.keys("Escape")
	term.waitFor("Sessions (All)")
	term.keys("C-c")
	term.waitFor("EXIT=0")
}

// TestBrowseTreeInTmux opens a session's tree directly: filters, search,
// folding, labels and the mouse wheel.
func TestBrowseTreeInTmux(t *testing.T) {
	f := newFixture(t)
	term := startTerminal(t, f, nil, "browse", f.example)
	term.waitFor("Session tree Fix day units in timeparse")
	term.keys("C-u")
	term.waitFor("filter: user")
	term.waitGone("assistant:", "user only shows assistant messages")
	term.keys("C-u")
	term.waitFor("filter: default")
	term.text("suffix")
	s := term.waitFor("Search: suffix")
	if rows := strings.Count(s, "\n   "); rows > 3 {
		t.Errorf("the search kept %d rows:\n%s", rows, s)
	}
	term.keys("Escape")
	term.waitFor("Type to search")
	term.keys("Home", "L")
	term.waitFor("Label (empty to remove)")
	term.text("start here")
	term.keys("Enter")
	term.waitFor("[start here] user:")
	if l, _ := jsonl.Read(f.example); l.Label("c07e5a13") != "start here" {
		t.Errorf("label %q", l.Label("c07e5a13"))
	}
	term.keys("C-c")
	term.waitFor("EXIT=0")
}

var colourCode = regexp.MustCompile(`\x1b\[[0-9;]*(3[0-7]|38;[25];[0-9;]+|9[0-7])m`)

// TestBrowseNoColor: with NO_COLOR the screen has no colour; without, it has.
func TestBrowseNoColor(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		env    []string
		colour bool
	}{{[]string{"COLORTERM=truecolor"}, true}, {[]string{"NO_COLOR=1"}, false}} {
		term := startTerminal(t, f, tc.env, "browse", "--all")
		term.waitFor("context heading")
		s := term.screen(true)
		if got := colourCode.MatchString(s); got != tc.colour {
			t.Errorf("%v: colour codes %v, want %v:\n%q", tc.env, got, tc.colour, s)
		}
		term.keys("C-c")
		term.waitFor("EXIT=0")
	}
}
