package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// The child writer of TestMvBesideAWriter: it opens the session named by
// ARBOR_MV_CHILD for writing, appends, says "ready", then appends a message
// every 20 ms until its input closes, and prints how many it appended.
func init() {
	path := os.Getenv("ARBOR_MV_CHILD")
	if path == "" {
		return
	}
	s, err := jsonl.Open(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	n := 0
	appendOne := func() {
		if _, err := s.AppendUser(fmt.Sprintf("from the writer %d", n)); err != nil {
			fmt.Println("append:", err)
			os.Exit(2)
		}
		n++
	}
	appendOne()
	fmt.Println("ready")
	done := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(done)
	}()
	for {
		select {
		case <-done:
			if err := s.Close(); err != nil {
				fmt.Println("close:", err)
				os.Exit(2)
			}
			fmt.Println(n)
			os.Exit(0)
		case <-time.After(20 * time.Millisecond):
			appendOne()
		}
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newSessionIn makes an arbor session for cwd, as the agent does, with one prompt.
func newSessionIn(t *testing.T, cwd, prompt string) string {
	t.Helper()
	s, err := jsonl.Create(cwd, jsonl.Dir(catalog.SessionsRoot(), cwd))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendUser(prompt); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Path()
}

func userTexts(t *testing.T, path string) []string {
	t.Helper()
	l, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Entries() {
		if m, err := e.Message(); err == nil && m.Role == session.RoleUser {
			if d, err := m.Data(); err == nil {
				out = append(out, d.Content.Text(""))
			}
		}
	}
	return out
}

// A project folder moves: its sessions are still listed in the new folder,
// marked, and arbor mv re-homes arbor's and pi's while a writer holds one:
// that one is reported and left whole, and moved by a later run.
func TestMvBesideAWriter(t *testing.T) {
	pkgDir, err := os.Getwd() // the child reads the package's fixtures as it starts
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("ARBOR_DIR", home)
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(home, "pi"))
	base := t.TempDir()
	old, moved := filepath.Join(base, "app"), filepath.Join(base, "work", "app")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	gitIn(t, old, "init", "-q")
	gitIn(t, old, "commit", "-q", "--allow-empty", "-m", "root")
	root := gitIn(t, old, "rev-parse", "HEAD")

	kept := newSessionIn(t, old, "first prompt")
	busy := newSessionIn(t, old, "busy prompt")
	if l, err := jsonl.Read(kept); err != nil || l.Header().Project.GitRoot != root {
		t.Fatalf("the session records project %+v (%v), want root commit %s", l.Header().Project, err, root)
	}
	// A session pi wrote: pi's layout, no project.
	piDir := jsonl.Dir(catalog.PiSessionsRoot(), old)
	if err := os.MkdirAll(piDir, 0o700); err != nil {
		t.Fatal(err)
	}
	piFile := filepath.Join(piDir, "2026-01-01T00-00-00-000Z_0195a0b0-0000-7000-8000-0000000000aa.jsonl")
	piData := `{"type":"session","version":3,"id":"0195a0b0-0000-7000-8000-0000000000aa","timestamp":"2026-01-01T00:00:00.000Z","cwd":"` + old + `"}` + "\n" +
		`{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"pi prompt","timestamp":1767225601000}}` + "\n"
	if err := os.WriteFile(piFile, []byte(piData), 0o600); err != nil {
		t.Fatal(err)
	}

	if err := os.MkdirAll(filepath.Dir(moved), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	t.Chdir(moved)

	r := runArbor(t, "", "ls")
	if r.code != 0 || strings.Count(r.out, "[moved from "+old+"]") != 2 || !strings.Contains(r.out, "first prompt") {
		t.Fatalf("ls in the moved folder (code %d):\n%s%s\nwant both arbor sessions marked moved from %s", r.code, r.out, r.err, old)
	}
	r = runArbor(t, "", "ls", "--json")
	var listed []catalog.Info
	if err := json.Unmarshal([]byte(r.out), &listed); err != nil || len(listed) != 2 || listed[0].MovedFrom != old {
		t.Fatalf("ls --json: %v\n%s", err, r.out)
	}

	// The writer holds busy open and appends to it.
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "ARBOR_MV_CHILD="+busy)
	child.Stderr, child.Dir = os.Stderr, pkgDir
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	out := bufio.NewReader(stdout)
	if line, _ := out.ReadString('\n'); line != "ready\n" {
		t.Fatalf("writer: %q", line)
	}

	r = runArbor(t, "", "mv", "--dry-run", old, moved)
	if r.code != 0 || strings.Count(r.out, "would move") != 3 {
		t.Fatalf("mv --dry-run: code %d\n%s%s", r.code, r.out, r.err)
	}
	for _, f := range []string{kept, busy, piFile} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("--dry-run changed %s: %v", f, err)
		}
	}
	newKept := filepath.Join(jsonl.Dir(catalog.SessionsRoot(), moved), filepath.Base(kept))
	newBusy := filepath.Join(jsonl.Dir(catalog.SessionsRoot(), moved), filepath.Base(busy))
	newPi := filepath.Join(jsonl.Dir(catalog.PiSessionsRoot(), moved), filepath.Base(piFile))
	for run := 1; run <= 2; run++ {
		r = runArbor(t, "", "mv", "--json", old, moved)
		var rs []catalog.Rehomed
		if err := json.Unmarshal([]byte(r.out), &rs); err != nil {
			t.Fatalf("mv --json, run %d: %v\n%s%s", run, err, r.out, r.err)
		}
		status := map[string]string{}
		for _, x := range rs {
			status[x.From] = x.Status
		}
		want := map[string]string{busy: catalog.RehomeLocked}
		if run == 1 {
			want[kept], want[piFile] = catalog.RehomeMoved, catalog.RehomeMoved
		}
		if fmt.Sprint(status) != fmt.Sprint(want) || r.code == 0 || !strings.Contains(r.err, "not moved") {
			t.Fatalf("mv, run %d (code %d): %v, want %v\n%s", run, r.code, status, want, r.err)
		}
	}
	for f, want := range map[string]string{newKept: "first prompt", newPi: "pi prompt"} {
		l, err := jsonl.Read(f)
		if err != nil || l.Header().Cwd != moved || strings.Join(userTexts(t, f), "|") != want {
			t.Errorf("%s: %v, cwd %q, prompts %q; want cwd %s and %q", f, err, l.Header().Cwd, userTexts(t, f), moved, want)
		}
	}
	for _, f := range []string{kept, piFile} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s is still in the old folder after being moved", f)
		}
	}
	r = runArbor(t, "", "restore", "--list", "--json")
	if !strings.Contains(r.out, kept) || !strings.Contains(r.out, piFile) {
		t.Errorf("the old files are not in the trash:\n%s%s", r.out, r.err)
	}

	// The writer lets go: its every append is in the moved copy.
	stdin.Close()
	line, _ := out.ReadString('\n')
	var appended int
	if _, err := fmt.Sscan(line, &appended); err != nil {
		t.Fatalf("writer said %q", line)
	}
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	before := userTexts(t, busy)
	if len(before) != 1+appended {
		t.Fatalf("the held session has %d prompts, want %d", len(before), 1+appended)
	}
	r = runArbor(t, "", "mv", old, moved)
	if r.code != 0 || !strings.Contains(r.out, "moved "+busy) {
		t.Fatalf("mv after the writer closed (code %d):\n%s%s", r.code, r.out, r.err)
	}
	if got := userTexts(t, newBusy); strings.Join(got, "|") != strings.Join(before, "|") {
		t.Errorf("moved copy holds %d prompts, the source held %d", len(got), len(before))
	}
	r = runArbor(t, "", "mv", old, moved)
	if r.code != 0 || !strings.Contains(r.out, "no session of") {
		t.Errorf("mv once all moved (code %d):\n%s%s", r.code, r.out, r.err)
	}
	r = runArbor(t, "", "ls")
	if r.code != 0 || strings.Contains(r.out, "moved from") || strings.Count(r.out, "\n") != 3 {
		t.Errorf("ls after mv: want the three sessions, unmarked:\n%s%s", r.out, r.err)
	}
}
