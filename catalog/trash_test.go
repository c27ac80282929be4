package catalog

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/arborlog/arbor/session/jsonl"
	"github.com/google/go-cmp/cmp"
)

// snapshot returns the bytes of every file under dir, by path relative to dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func TestRemoveRestoreRoundTrip(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	w := newSession(t, dir, "0195dddd-0000-7000-8000-000000000001", "/p")
	w.user("keep me")
	w.name("precious")
	other := newSession(t, dir, "0195dddd-0000-7000-8000-000000000002", "/p")
	other.user("bystander")
	for _, s := range []string{".torn", ".bak", ".v1.bak", ".corrupt"} {
		os.WriteFile(w.path+s, []byte("sidecar "+s), 0o600)
	}
	before := snapshot(t, dir)
	c := Open(home)
	defer c.Close()

	tr, err := c.Remove(w.path)
	if err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	if len(after) != 1 || after[filepath.Base(other.path)] != before[filepath.Base(other.path)] {
		t.Fatalf("after rm the folder holds %v; want only the other session", keys(after))
	}
	trash := snapshot(t, filepath.Join(home, "trash"))
	for name, data := range before {
		if name == filepath.Base(other.path) {
			continue
		}
		if got := trash[filepath.Join(filepath.Base(tr.dir), name)]; got != data {
			t.Errorf("trash copy of %s differs", name)
		}
	}
	if got, _ := c.List(Scope{Dir: dir}, ListOptions{}); len(got) != 1 {
		t.Errorf("listing after rm shows %d sessions, want 1", len(got))
	}

	for _, arg := range []string{"precious", "0195dddd-0000-7000-8000-000000000001", "0195dddd-0000-7000-8000-0000000000"} {
		ts, _ := c.Trash()
		if len(ts) != 1 {
			t.Fatalf("trash holds %d sessions", len(ts))
		}
		if _, err := c.Restore(arg); err != nil {
			t.Fatalf("restore %q: %v", arg, err)
		}
		if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
			t.Fatalf("restore %q did not bring back the same bytes:\n%s", arg, diff)
		}
		if _, err := c.Remove(w.path); err != nil {
			t.Fatal(err)
		}
	}
	// Restoring over an existing file is refused and changes nothing.
	os.WriteFile(w.path, []byte("a new file at the same path\n"), 0o600)
	if _, err := c.Restore("precious"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("restore over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(w.path); string(b) != "a new file at the same path\n" {
		t.Error("restore overwrote a file")
	}
	if _, err := c.Restore("no-such-thing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("restore of an unknown session: %v", err)
	}
}

func TestRemoveRefusesOpenSession(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	w := newSession(t, dir, "0195eeee-0000-7000-8000-000000000001", "/p")
	w.user("in use")
	w.assistant("yes", "", nil)
	s, err := jsonl.Open(w.path)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	c := Open(home)
	defer c.Close()
	_, err = c.Remove(w.path)
	var le *jsonl.LockError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "pid") {
		t.Errorf("rm of a session open for writing: %v; want an error naming the holder", err)
	}
	if err := c.Purge(w.path); !errors.As(err, &le) {
		t.Errorf("purge of a session open for writing: %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("a refused rm changed files:\n%s", diff)
	}
	s.Close()
	if _, err := c.Remove(w.path); err != nil {
		t.Errorf("rm after the writer closed: %v", err)
	}
	if _, err := os.Stat(w.path + ".lock"); err == nil {
		t.Error("rm left the lock file behind")
	}
}

func TestPurge(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	w := newSession(t, dir, "0195ffff-0000-7000-8000-000000000001", "/p")
	w.user("goodbye")
	os.WriteFile(w.path+".torn", []byte("x"), 0o600)
	keep := newSession(t, dir, "0195ffff-0000-7000-8000-000000000002", "/p")
	keep.user("stays")
	want := snapshot(t, dir)
	delete(want, filepath.Base(w.path))
	delete(want, filepath.Base(w.path)+".torn")
	c := Open(home)
	defer c.Close()
	if err := c.Purge(w.path); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, snapshot(t, dir)); diff != "" {
		t.Errorf("purge (-want +got):\n%s", diff)
	}
	if ts, _ := c.Trash(); len(ts) != 0 {
		t.Error("purge put the session in the trash")
	}
}

func TestArchiveRoundTrip(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	w := newSession(t, dir, "0195abab-0000-7000-8000-000000000001", "/p")
	w.user("old spike")
	x := newSession(t, dir, "0195abab-0000-7000-8000-000000000002", "/p")
	x.user("current work")
	before := snapshot(t, dir)
	c := Open(home)
	defer c.Close()
	ids := func(opt ListOptions) []string {
		got, err := c.List(Scope{Dir: dir}, opt)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, in := range got {
			out = append(out, in.ID[len(in.ID)-1:])
		}
		return out
	}
	if err := c.Archive(w.path); err != nil {
		t.Fatal(err)
	}
	if err := c.Archive(w.path); err != nil { // twice is fine
		t.Fatal(err)
	}
	if got := ids(ListOptions{}); !cmp.Equal(got, []string{"2"}) {
		t.Errorf("ls after archive: %v", got)
	}
	if got := ids(ListOptions{Archived: true}); len(got) != 2 {
		t.Errorf("ls --archived: %v", got)
	}
	found := func(opt SearchOptions) int {
		q, err := ParseQuery("spike")
		if err != nil {
			t.Fatal(err)
		}
		hits, err := c.Search(Scope{Dir: dir}, q, opt)
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	if n := found(SearchOptions{}); n != 0 {
		t.Errorf("search found %d hits in an archived session, want none without --archived", n)
	}
	if n := found(SearchOptions{Archived: true}); n != 1 {
		t.Errorf("search --archived found %d hits, want the archived session's one", n)
	}
	if p, err := c.Resolve("0195abab-0000-7000-8000-000000000001", Scope{Dir: dir}); err != nil || p != w.path {
		t.Errorf("an archived session is not found by id: %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("archive changed session files:\n%s", diff)
	}
	if ok, err := c.Unarchive(w.path); !ok || err != nil {
		t.Fatalf("unarchive: %v %v", ok, err)
	}
	if ok, _ := c.Unarchive(w.path); ok {
		t.Error("unarchive of a session that is not archived reported success")
	}
	if got := ids(ListOptions{}); len(got) != 2 {
		t.Errorf("ls after unarchive: %v", got)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestPurgeTrashed(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	w := newSession(t, dir, "0195fefe-0000-7000-8000-000000000001", "/p")
	w.user("into the trash")
	os.WriteFile(w.path+".bak", []byte("b"), 0o600)
	c := Open(home)
	defer c.Close()
	if _, err := c.Remove(w.path); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PurgeTrashed("0195fefe"); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, home); len(got) != 0 {
		t.Errorf("the trash still holds %v", keys(got))
	}
	if got := snapshot(t, dir); len(got) != 0 {
		t.Errorf("the session folder holds %v", keys(got))
	}
	if _, err := c.PurgeTrashed("0195fefe"); !errors.Is(err, ErrNotFound) {
		t.Errorf("purging twice: %v", err)
	}
}

// hostileSession writes a session whose header id and name are hostile, at a plain file name.
func hostileSession(t *testing.T, dir, id, name string) string {
	t.Helper()
	path := filepath.Join(dir, "hostile.jsonl")
	data := `{"type":"session","version":3,"id":` + jsonString(id) + `,"timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"aaaaaaa1","parentId":null,"timestamp":"2026-03-01T12:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n" +
		`{"type":"session_info","id":"aaaaaaa2","parentId":"aaaaaaa1","timestamp":"2026-03-01T12:00:02.000Z","name":` + jsonString(name) + `}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestTrashHostileIDs: ids and names from a file never become paths: the
// trash folder's name is generated, nothing is created or changed outside it,
// and the session comes back where it was.
func TestTrashHostileIDs(t *testing.T) {
	for _, id := range []string{"../../escape", "/etc/passwd", "a\x00b", strings.Repeat("x/", 200), "..", "con:ok"} {
		root := t.TempDir()
		dir, home := filepath.Join(root, "sessions"), filepath.Join(root, "home")
		os.MkdirAll(dir, 0o700)
		path := hostileSession(t, dir, id, "../"+id)
		c := Open(home)
		tr, err := c.Remove(path)
		if err != nil {
			t.Fatalf("id %q: %v", id, err)
		}
		if filepath.Dir(tr.dir) != filepath.Join(home, "trash") {
			t.Fatalf("id %q: trash folder %s is not directly under %s", id, tr.dir, filepath.Join(home, "trash"))
		}
		all := snapshot(t, root)
		for p := range all {
			if !strings.HasPrefix(p, filepath.Join("home", "trash", filepath.Base(tr.dir))+string(filepath.Separator)) {
				t.Fatalf("id %q: %s exists outside the trash folder", id, p)
			}
		}
		if _, err := c.Restore(id); err != nil {
			t.Fatalf("id %q: restore by its id: %v", id, err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("id %q: not restored: %v", id, err)
		}
		c.Close()
	}
}

// TestTrashRecordTampered: a trash record whose names would leave its folder is ignored.
func TestTrashRecordTampered(t *testing.T) {
	root := t.TempDir()
	dir, home := filepath.Join(root, "sessions"), filepath.Join(root, "home")
	os.MkdirAll(dir, 0o700)
	w := newSession(t, dir, "0195dddd-0000-7000-8000-00000000000a", "/p")
	w.user("x")
	c := Open(home)
	defer c.Close()
	tr, err := c.Remove(w.path)
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(tr.dir, trashRecord)
	b, _ := os.ReadFile(rec)
	victim := filepath.Join(root, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	for _, bad := range []string{
		strings.Replace(string(b), `"name": "`+filepath.Base(w.path)+`"`, `"name": "../../victim"`, 1),
		strings.Replace(string(b), `"original": "`+w.path+`"`, `"original": "relative/x.jsonl"`, 1),
	} {
		if bad == string(b) {
			t.Fatal("the record did not change")
		}
		os.WriteFile(rec, []byte(bad), 0o600)
		if ts, _ := c.Trash(); len(ts) != 0 {
			t.Errorf("a tampered record is listed: %+v", ts)
		}
		if _, err := c.PurgeTrashed(tr.ID); err == nil {
			t.Errorf("purge through a tampered record succeeded")
		}
		if _, err := c.Restore(tr.ID); err == nil {
			t.Errorf("restore through a tampered record succeeded")
		}
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious" {
		t.Errorf("the victim changed: %q", got)
	}
}

// TestOnlySessionsAreTrashed: a file that is not a session is neither trashed
// nor deleted; a symlink to a session is not either.
func TestOnlySessionsAreTrashed(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o600)
	log := filepath.Join(dir, "app.jsonl")
	os.WriteFile(log, []byte(`{"level":"info","msg":"x"}`+"\n"), 0o600)
	w := newSession(t, dir, "0195dddd-0000-7000-8000-00000000000b", "/p")
	w.user("x")
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(w.path, link)
	c := Open(home)
	defer c.Close()
	for _, p := range []string{notes, log, link} {
		if _, err := c.Remove(p); !errors.Is(err, ErrNotSessionFile) {
			t.Errorf("Remove(%s) = %v, want ErrNotSessionFile", p, err)
		}
		if err := c.Purge(p); !errors.Is(err, ErrNotSessionFile) {
			t.Errorf("Purge(%s) = %v, want ErrNotSessionFile", p, err)
		}
	}
	for _, p := range []string{notes, log, link, w.path} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s is gone: %v", p, err)
		}
	}
}

// TestPurgeRemovesEverySidecar: numbered and half-written sidecars go with
// the session; a file that only starts with its name stays.
func TestPurgeRemovesEverySidecar(t *testing.T) {
	for _, purge := range []bool{true, false} {
		dir, home := t.TempDir(), t.TempDir()
		w := newSession(t, dir, "0195dddd-0000-7000-8000-00000000000c", "/p")
		w.user("x")
		for _, s := range []string{".torn", ".torn.1", ".bak.1", ".corrupt.2", ".v2.bak", ".v2.bak.1.tmp", ".tmp", ".tmp.4", ".lock"} {
			os.WriteFile(w.path+s, []byte("s"), 0o600)
		}
		keep := w.path + ".notes"
		os.WriteFile(keep, []byte("mine"), 0o600)
		err := removeOrPurge(home, w.path, purge)
		if err != nil {
			t.Fatal(err)
		}
		got := snapshot(t, dir)
		if len(got) != 1 || got[filepath.Base(keep)] != "mine" {
			t.Errorf("purge=%v: the folder holds %v, want only %s", purge, keys(got), filepath.Base(keep))
		}
	}
}

// TestRemoveAcrossFileSystems: a session moved to a trash on another file
// system is copied; what another program (pi, which takes no lock) appends to
// it during the copy is in the trashed copy, not lost with the original.
func TestRemoveAcrossFileSystems(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	w := newSession(t, dir, "0195dddd-0000-7000-8000-000000000009", "/p")
	w.user("keep me")
	rename = func(oldpath, newpath string) error {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.EXDEV}
	}
	late := `{"type":"custom","id":"f0000001","parentId":null,"timestamp":"2026-03-01T12:00:09.000Z","customType":"pi","data":{}}`
	copied = func(src string) {
		if src != w.path {
			return
		}
		f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(late + "\n")
		f.Close()
	}
	defer func() { rename, copied = os.Rename, func(string) {} }()
	c := Open(home)
	defer c.Close()
	tr, err := c.Remove(w.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.path); !os.IsNotExist(err) {
		t.Fatalf("the original is still there: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(tr.dir, filepath.Base(w.path)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "keep me") || !strings.HasSuffix(string(b), late+"\n") {
		t.Fatalf("the trashed copy lacks what was appended during the copy:\n%s", b)
	}
}
