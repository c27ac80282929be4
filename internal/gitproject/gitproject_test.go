package gitproject

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestOfRepository(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	run(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	root := run(t, dir, "rev-parse", "HEAD")
	run(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
	run(t, dir, "remote", "add", "origin", "https://alice:s3cret@example.com/alice/repo.git")
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	p := Of(sub)
	if p.GitRoot != root {
		t.Errorf("gitRoot = %q, want the first commit %q", p.GitRoot, root)
	}
	if p.Remote != "https://example.com/alice/repo.git" {
		t.Errorf("remote = %q: the password must be removed", p.Remote)
	}
}

func TestOfOutsideRepository(t *testing.T) {
	if p := Of(t.TempDir()); !p.IsZero() {
		t.Errorf("a folder outside any repository has project %+v", p)
	}
	// A repository without commits, and git missing from PATH: no error, no field.
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	if p := Of(dir); !p.IsZero() {
		t.Errorf("a repository without commits or remote has project %+v", p)
	}
	t.Setenv("PATH", t.TempDir())
	if p := Of(dir); !p.IsZero() {
		t.Errorf("without git: %+v", p)
	}
}

func TestCleanRemote(t *testing.T) {
	for in, want := range map[string]string{
		"https://ghp_token@github.com/a/b.git": "https://github.com/a/b.git",
		"https://u:p@host/a/b":                 "https://host/a/b",
		"ssh://git:pw@host:22/a/b":             "ssh://git@host:22/a/b",
		"ssh://git@host/a/b":                   "ssh://git@host/a/b",
		"git@github.com:a/b.git":               "git@github.com:a/b.git",
		"user:pass@host:a/b.git":               "user@host:a/b.git",
		"/srv/git/repo.git":                    "/srv/git/repo.git",
		"https://host/a/b\nhttps://u:p@evil/":  "",
		"":                                     "",
	} {
		if got := CleanRemote(in); got != want {
			t.Errorf("CleanRemote(%q) = %q, want %q", in, got, want)
		}
	}
}
