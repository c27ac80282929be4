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
	cafe := newSession(t, dir, "cafe0000-5555-7000-8000-000000000005", "/p")
	cafe.user("id starts with cafe")
	named := newSession(t, dir, "0195dddd-6666-7000-8000-000000000006", "/p")
	named.user("named cafe")
	named.name("cafe")
	spaced := newSession(t, dir, "0195eeee-7777-7000-8000-000000000007", "/p")
	spaced.user("x")
	spaced.name("Fix   the  Bug")
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
		{arg: "cafe", ambiguous: true},  // a name and an id prefix of two sessions: neither silently wins
		{arg: "cafe0", want: cafe.path}, // a longer prefix is no name
		{arg: "fix the bug", want: spaced.path},
		{arg: "FIX THE  BUG", want: spaced.path},
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
// TestResolveFileAndName: an argument that is both a file here and a
// session's name is ambiguous; ./ or an absolute path says it is the file.
func TestResolveFileAndName(t *testing.T) {
	dir := t.TempDir()
	w := newSession(t, dir, "0195ffff-1111-7000-8000-000000000001", "/p")
	w.user("x")
	w.name("../secret.txt")
	work := filepath.Join(t.TempDir(), "work")
	os.MkdirAll(work, 0o700)
	secret := filepath.Join(filepath.Dir(work), "secret.txt")
	os.WriteFile(secret, []byte("not a session"), 0o600)
	t.Chdir(work)
	cat := Open(t.TempDir())
	defer cat.Close()
	_, err := cat.Resolve("../secret.txt", Scope{Dir: dir})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.File != secret || len(amb.Candidates) != 1 || amb.Candidates[0].Path != w.path {
		t.Fatalf("Resolve: %v, want the file and the session both named", err)
	}
	if got, err := cat.Resolve("./../secret.txt", Scope{Dir: dir}); err != nil || got != secret {
		t.Errorf("./../secret.txt = %q, %v; want the file", got, err)
	}
}

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

// TestResolvePathLikeIDs: ids and names come from files and may look like
// paths. With no file at that path, the session whose id or name it is is
// meant (it could not be named at all before); with a file there that is
// also a session's id, the argument is ambiguous, never the file silently.
func TestResolvePathLikeIDs(t *testing.T) {
	dir := t.TempDir()
	hostile := func(id, name string) string {
		p := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_", `\`, "_").Replace(id)+".jsonl")
		data := `{"type":"session","version":3,"id":` + jsonString(id) + `,"timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}` + "\n" +
			`{"type":"message","id":"aaaaaaa1","parentId":null,"timestamp":"2026-03-01T12:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
		if name != "" {
			data += `{"type":"session_info","id":"aaaaaaa2","parentId":"aaaaaaa1","timestamp":"2026-03-01T12:00:02.000Z","name":` + jsonString(name) + `}` + "\n"
		}
		os.WriteFile(p, []byte(data), 0o600)
		return p
	}
	escape := hostile("../../escape", "")
	winID := hostile(`..\x`, "")
	named := hostile("0195ffff-2222-7000-8000-000000000002", "a/b")
	work := filepath.Join(t.TempDir(), "work")
	os.MkdirAll(work, 0o700)
	t.Chdir(work)
	cat := Open(t.TempDir())
	defer cat.Close()
	for arg, want := range map[string]string{"../../escape": escape, `..\x`: winID, "a/b": named} {
		if got, err := cat.Resolve(arg, Scope{Dir: dir}); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want the session %s", arg, got, err, want)
		}
	}
	// A file at the path and a session whose id it is.
	os.WriteFile(filepath.Join(filepath.Dir(filepath.Dir(work)), "escape"), []byte("not a session"), 0o600)
	var amb *AmbiguousError
	if _, err := cat.Resolve("../../escape", Scope{Dir: dir}); !errors.As(err, &amb) || len(amb.Candidates) != 1 || amb.Candidates[0].Path != escape {
		t.Errorf("Resolve(../../escape) with a file there: %v; want the file and the session both named", err)
	}
	// No file and no session: the path, as before (a command may create it).
	if got, err := cat.Resolve("../nothing", Scope{Dir: dir}); err != nil || got != filepath.Join(filepath.Dir(work), "nothing") {
		t.Errorf("Resolve(../nothing) = %q, %v", got, err)
	}
}
