package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	a := newSession(t, dir, "0195aaaa-1111-7000-8000-000000000001", "/p")
	a.user("a")
	a.name("first name")
	a.name("alpha")
	b := newSession(t, dir, "0195aaaa-2222-7000-8000-000000000002", "/p")
	b.user("b")
	b.name("twin")
	c2 := newSession(t, dir, "0195bbbb-3333-7000-8000-000000000003", "/p")
	c2.user("c")
	c2.name("twin")
	empty := newSession(t, dir, "0195cccc-4444-7000-8000-000000000004", "/p") // header only: still found
	cat := Open(t.TempDir())
	defer cat.Close()
	s := Scope{Dir: dir}
	tests := []struct {
		arg, want string
		ambiguous bool
		notFound  bool
	}{
		{arg: a.path, want: a.path},
		{arg: "0195aaaa-1111-7000-8000-000000000001", want: a.path},
		{arg: "0195aaaa-2", want: b.path},
		{arg: "0195cccc", want: empty.path},
		{arg: "alpha", want: a.path},
		{arg: "first name", notFound: true}, // the latest session_info wins
		{arg: "0195aaaa", ambiguous: true},
		{arg: "twin", ambiguous: true},
		{arg: "nobody", notFound: true},
	}
	for _, tt := range tests {
		got, err := cat.Resolve(tt.arg, s)
		var amb *AmbiguousError
		switch {
		case tt.ambiguous:
			if !errors.As(err, &amb) || len(amb.Candidates) != 2 {
				t.Errorf("%q: %v; want two candidates", tt.arg, err)
			}
		case tt.notFound:
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tt.arg) {
				t.Errorf("%q: %v; want not found naming it", tt.arg, err)
			}
		case err != nil || got != tt.want:
			t.Errorf("%q: %q, %v; want %q", tt.arg, got, err, tt.want)
		}
	}
}

// TestResolveProjectThenEverywhere checks the project scope filters by the
// header's cwd (folder names collide) and falls back to every project.
func TestResolveProjectThenEverywhere(t *testing.T) {
	home := t.TempDir()
	t.Setenv("ARBOR_DIR", home)
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(home, "pi"))
	// /a/b-c and /a-b/c share the folder --a-b-c--.
	folder := filepath.Join(home, "sessions", "--a-b-c--")
	os.MkdirAll(folder, 0o700)
	mine := newSession(t, folder, "0195aaaa-0000-7000-8000-00000000000a", "/a/b-c")
	mine.user("mine")
	theirs := newSession(t, folder, "0195aaaa-0000-7000-8000-00000000000b", "/a-b/c")
	theirs.user("theirs")
	cat := Open("")
	defer cat.Close()
	got, err := cat.List(Scope{Cwd: "/a/b-c"}, ListOptions{})
	if err != nil || len(got) != 1 || got[0].ID != "0195aaaa-0000-7000-8000-00000000000a" {
		t.Fatalf("project listing: %v %v", got, err)
	}
	if all, _ := cat.List(Scope{All: true}, ListOptions{}); len(all) != 2 {
		t.Errorf("--all lists %d sessions, want 2", len(all))
	}
	// An id from another project is still found, through the fallback.
	p, err := cat.Resolve("0195aaaa-0000-7000-8000-00000000000b", Scope{Cwd: "/a/b-c"})
	if err != nil || p != theirs.path {
		t.Errorf("fallback to every project: %q %v", p, err)
	}
	// The prefix is unique in the project but not everywhere: the project wins.
	p, err = cat.Resolve("0195aaaa", Scope{Cwd: "/a/b-c"})
	if err != nil || p != mine.path {
		t.Errorf("project-first lookup: %q %v", p, err)
	}
	if in, err := cat.Latest(Scope{Cwd: "/a-b/c"}); err != nil || in.Path != theirs.path {
		t.Errorf("latest: %+v %v", in, err)
	}
}
