package jsonl

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

// A session made in a git repository records its root commit and remote, so
// it can be found after the folder moves; outside a repository it records none.
func TestCreateRecordsProject(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "root")
	git("remote", "add", "origin", "https://tok@example.com/r.git")
	root := git("rev-parse", "HEAD")
	for _, c := range []struct {
		cwd  string
		want session.Project
	}{
		{repo, session.Project{GitRoot: root, Remote: "https://example.com/r.git"}},
		{t.TempDir(), session.Project{}},
	} {
		s, err := Create(c.cwd, t.TempDir(), Immediate())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		s.Close()
		l, err := Read(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Header().Project; got != c.want {
			t.Errorf("cwd %s: project %+v, want %+v", c.cwd, got, c.want)
		}
	}
}
