package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/catalog"
	goldenfile "github.com/arborlog/arbor/internal/golden"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/charmbracelet/x/ansi"
)

const (
	corpus  = "../../testdata/pi/sessions"
	example = "../../examples/refactor.jsonl"
	// exampleCwd is the project of examples/refactor.jsonl: the picker's
	// current folder in these tests.
	exampleCwd = "/home/dev/timeparse"
)

// now is the clock of every test screen, so ages stay put.
var now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// startEnv is the environment the tests started with, before any test set
// HOME: the go command finds its caches through it.
var startEnv []string

func TestMain(m *testing.M) {
	startEnv = os.Environ()
	time.Local = time.UTC // dates in the listing are local
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir) // the arbor the tests built
	}
	os.Exit(code)
}

// fixture is a home of sessions: examples/refactor.jsonl in arbor's folder,
// and some of the pi corpus (pi wrote them) in pi's.
type fixture struct {
	arbor, pi string
	work      string // the folder the tmux tests run arbor in
	example   string // the copy of examples/refactor.jsonl
	pi3       string // the copy of v3-tree.jsonl
}

var piFiles = []string{"gen-s1-0.jsonl", "gen-s1-1.jsonl", "gen-s2-0.jsonl", "v3-tree.jsonl", "v2-basic.jsonl", "v1-branched.jsonl", "big-1mb.jsonl"}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{arbor: filepath.Join(root, "arbor"), pi: filepath.Join(root, "pi"), work: filepath.Join(root, "work")}
	if err := os.Mkdir(f.work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ARBOR_DIR", f.arbor)
	t.Setenv("PI_CODING_AGENT_DIR", f.pi)
	t.Setenv("HOME", root) // paths on screen start with ~, the same on every run
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	f.example = filepath.Join(jsonl.Dir(filepath.Join(f.arbor, "sessions"), exampleCwd), "2026-11-20T09-14-02-118Z_019ab0c2-5e1f-7a43-9d2e-6c81f0a4b7d3.jsonl")
	write(t, f.example, data)
	// A fork of it (pi's /fork writes parentSession), so the threaded sort has
	// a thread to draw.
	lines := strings.SplitN(string(data), "\n", 2)
	header := strings.Replace(lines[0], `"id":"019ab0c2-5e1f-7a43-9d2e-6c81f0a4b7d3"`, `"id":"019ab0c3-0000-7000-8000-000000000001","parentSession":"`+f.example+`"`, 1)
	body := strings.ReplaceAll(lines[1], "2026-11-20T09:1", "2026-11-21T09:1") // a day later
	body = strings.Replace(body, `"name":"Fix day units in timeparse"`, `"name":"the fork"`, 1)
	write(t, filepath.Join(filepath.Dir(f.example), "2026-11-21T09-14-02-118Z_019ab0c3-0000-7000-8000-000000000001.jsonl"), []byte(header+"\n"+body))
	for _, name := range piFiles {
		data, err := os.ReadFile(filepath.Join(corpus, name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(f.pi, "sessions", "--home-dev--", name)
		write(t, p, data)
		if name == "v3-tree.jsonl" {
			f.pi3 = p
		}
	}
	return f
}

func write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// harness drives a Browser as bubbletea would: every command runs, in order,
// and its message goes back to Update, until nothing is left. Spinner ticks
// are dropped (they only animate).
type harness struct {
	t    testing.TB
	b    *Browser
	cat  *catalog.Catalog
	quit bool
}

func newHarness(t testing.TB, o BrowseOptions, w, h int) *harness {
	t.Helper()
	if o.Catalog == nil {
		o.Catalog = catalog.Open("")
	}
	if o.Now == nil {
		o.Now = func() time.Time { return now }
	}
	if o.Scope == (catalog.Scope{}) {
		o.Scope = catalog.Scope{Cwd: exampleCwd}
	}
	hs := &harness{t: t, b: NewBrowser(o), cat: o.Catalog}
	t.Cleanup(func() { o.Catalog.Close() })
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.b.Init())
	return hs
}

func (h *harness) send(msg tea.Msg) {
	_, cmd := h.b.Update(msg)
	h.run(cmd)
}

func (h *harness) run(cmd tea.Cmd) {
	runCmd(cmd, func(msg tea.Msg) {
		if _, ok := msg.(tea.QuitMsg); ok {
			h.quit = true
			return
		}
		h.send(msg)
	})
}

// runCmd runs cmd as the bubbletea runtime would, at once: a batch's commands
// one by one, spinner ticks dropped (they would never stop), and every other
// message it yields handed to send.
func runCmd(cmd tea.Cmd, send func(tea.Msg)) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, spinner.TickMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(c, send)
		}
	default:
		send(msg)
	}
}

// keys types each key: a name bubbletea knows ("enter", "ctrl+s", "tab") or
// text, one rune at a time.
func (h *harness) keys(keys ...string) {
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	var mod tea.KeyMod
	for {
		switch {
		case strings.HasPrefix(k, "ctrl+"):
			mod |= tea.ModCtrl
			k = k[5:]
			continue
		case strings.HasPrefix(k, "alt+"):
			mod |= tea.ModAlt
			k = k[4:]
			continue
		case strings.HasPrefix(k, "shift+"):
			mod |= tea.ModShift
			k = k[6:]
			continue
		}
		break
	}
	codes := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace, "space": tea.KeySpace}
	if c, ok := codes[k]; ok {
		return tea.KeyPressMsg{Code: c, Mod: mod}
	}
	r := []rune(k)[0]
	if mod == 0 || mod == tea.ModShift {
		text := string(r)
		if mod == tea.ModShift {
			text = strings.ToUpper(text)
		}
		return tea.KeyPressMsg{Code: r, Text: text, Mod: mod}
	}
	return tea.KeyPressMsg{Code: r, Mod: mod}
}

// screen is what the terminal shows, without colours, with the fixture's
// folders written as $HOME_ARBOR and $HOME_PI.
func (h *harness) screen(f *fixture) string {
	s := ansi.Strip(h.b.View().Content)
	if f != nil {
		s = strings.ReplaceAll(s, f.arbor, "$ARBOR")
		s = strings.ReplaceAll(s, f.pi, "$PI")
	}
	return s
}

// golden compares a screen with testdata/screens/<name>.golden; -update
// rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "screens", name+".golden"), []byte(got))
}

// collect runs a command and the batches it holds, returning their messages
// (spinner ticks dropped).
func (h *harness) collect(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil, spinner.TickMsg:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, h.collect(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// runTree gives msg to a tree alone, and what follows from it.
func (h *harness) runTree(tr *Tree, msg tea.Msg) {
	for _, m := range h.collect(tr.Update(msg)) {
		h.runTree(tr, m)
	}
}
