//go:build unix

package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// plant puts, at sidecar names of path, what arbor never writes there: a
// symlink to victim, a dangling symlink, a folder and a FIFO. It returns their names.
func plant(t *testing.T, path, victim string) []string {
	t.Helper()
	names := []string{path + ".bak.7", path + ".torn.7", path + ".corrupt.7", path + ".tmp.7"}
	if err := os.Symlink(victim, names[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(victim), "created"), names[1]); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(names[2], 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(names[3], 0o600); err != nil {
		t.Fatal(err)
	}
	return names
}

// TestTrashLeavesPlantedFiles: a symlink, a folder or a FIFO at a sidecar's
// name is not a sidecar: rm and purge leave it where it is, and nothing is
// read through it, even when the trash is on another file system (where rm
// copies: it used to copy the symlink's target into the trash, and to wait
// for ever on the FIFO).
func TestTrashLeavesPlantedFiles(t *testing.T) {
	homes := map[string]string{"same file system": ""}
	if shm, err := os.MkdirTemp("/dev/shm", "arbor-trash-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(shm) })
		homes["another file system"] = shm
	}
	for what, home := range homes {
		for _, purge := range []bool{false, true} {
			root := t.TempDir()
			if home == "" {
				home = filepath.Join(root, "home")
			} else {
				home = filepath.Join(home, filepath.Base(root))
			}
			dir := filepath.Join(root, "sessions")
			os.MkdirAll(dir, 0o700)
			victim := filepath.Join(root, "victim")
			os.WriteFile(victim, []byte("precious"), 0o600)
			w := newSession(t, dir, "0195dddd-0000-7000-8000-00000000000d", "/p")
			w.user("x")
			os.WriteFile(w.path+".bak", []byte("mine"), 0o600)
			planted := plant(t, w.path, victim)
			err := removeOrPurge(home, w.path, purge)
			if err != nil {
				t.Fatalf("%s, purge=%v: %v", what, purge, err)
			}
			for _, p := range planted {
				if _, err := os.Lstat(p); err != nil {
					t.Errorf("%s, purge=%v: %s was taken: %v", what, purge, filepath.Base(p), err)
				}
			}
			for _, p := range []string{w.path, w.path + ".bak"} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s, purge=%v: %s is still there", what, purge, filepath.Base(p))
				}
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Errorf("%s, purge=%v: the victim changed: %q", what, purge, b)
			}
			if _, err := os.Lstat(filepath.Join(root, "created")); err == nil {
				t.Errorf("%s, purge=%v: a file was created through the dangling symlink", what, purge)
			}
			for p, data := range snapshot(t, home) {
				if strings.Contains(data, "precious") {
					t.Errorf("%s, purge=%v: %s in the trash holds the symlink's target", what, purge, p)
				}
			}
		}
	}
}

// TestMoveFileAcrossFileSystems: the copy that moves a file to another file
// system refuses a symlink and a FIFO instead of reading through it.
func TestMoveFileAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "arbor-move-")
	if err != nil {
		t.Skip("no /dev/shm")
	}
	defer os.RemoveAll(shm)
	dir := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat(shm, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the same file system as the temporary folder")
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	link, fifo := filepath.Join(dir, "link"), filepath.Join(dir, "fifo")
	os.Symlink(victim, link)
	syscall.Mkfifo(fifo, 0o600)
	for _, src := range []string{link, fifo} {
		dst := filepath.Join(shm, filepath.Base(src))
		if err := moveFile(src, dst); err == nil {
			t.Errorf("moveFile(%s) across file systems succeeded", filepath.Base(src))
		}
		if _, err := os.Lstat(dst); err == nil {
			t.Errorf("moveFile(%s) created %s", filepath.Base(src), dst)
		}
		if _, err := os.Lstat(src); err != nil {
			t.Errorf("moveFile(%s) removed it: %v", filepath.Base(src), err)
		}
	}
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, []byte("data"), 0o600)
	if err := moveFile(reg, filepath.Join(shm, "reg")); err != nil {
		t.Errorf("moveFile of a regular file across file systems: %v", err)
	}
}

// TestTrashRecordSendsFilesElsewhere: a record edited so that restoring it
// would put a file anywhere but back beside the session, make folders, or
// follow a symlink in the trash is not followed: nothing outside the trash
// is created or changed, and the session stays in the trash.
func TestTrashRecordSendsFilesElsewhere(t *testing.T) {
	type file struct{ Name, Original string }
	type record struct {
		ID, Path string
		Files    []file
	}
	for _, tc := range []struct {
		name   string
		tamper func(r *record, root, trashed string)
	}{
		{"a sidecar into another folder", func(r *record, root, _ string) {
			r.Files[1].Original = filepath.Join(root, "other", r.Files[1].Name)
		}},
		{"the whole session into new folders", func(r *record, root, _ string) {
			r.Path = filepath.Join(root, "deep", "new", filepath.Base(r.Path))
			for i := range r.Files {
				r.Files[i].Original = filepath.Join(root, "deep", "new", r.Files[i].Name)
			}
		}},
		{"the session into another existing folder, apart from its path", func(r *record, root, _ string) {
			r.Files[0].Original = filepath.Join(root, "other", r.Files[0].Name)
		}},
		{"a sidecar first", func(r *record, _, _ string) { r.Files[0], r.Files[1] = r.Files[1], r.Files[0] }},
		{"a file not named as a sidecar", func(r *record, _, trashed string) {
			os.WriteFile(filepath.Join(trashed, ".profile"), []byte("evil"), 0o600)
			r.Files[1] = file{".profile", filepath.Join(filepath.Dir(r.Path), ".profile")}
		}},
		{"one file twice", func(r *record, _, _ string) { r.Files = append(r.Files, r.Files[1]) }},
		{"the session replaced by a symlink in the trash", func(r *record, root, trashed string) {
			p := filepath.Join(trashed, r.Files[0].Name)
			os.Remove(p)
			os.Symlink(filepath.Join(root, "victim"), p)
		}},
		{"the session replaced by a file that is not a session", func(r *record, root, trashed string) {
			os.WriteFile(filepath.Join(trashed, r.Files[0].Name), []byte("evil\n"), 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir, home := filepath.Join(root, "sessions"), filepath.Join(root, "home")
			os.MkdirAll(dir, 0o700)
			os.MkdirAll(filepath.Join(root, "other"), 0o700)
			os.WriteFile(filepath.Join(root, "victim"), []byte("precious"), 0o600)
			w := newSession(t, dir, "0195dddd-0000-7000-8000-00000000000e", "/p")
			w.user("x")
			os.WriteFile(w.path+".bak", []byte("b"), 0o600)
			c := Open(home)
			defer c.Close()
			tr, err := c.Remove(w.path)
			if err != nil {
				t.Fatal(err)
			}
			recPath := filepath.Join(tr.dir, trashRecord)
			var r record
			b, _ := os.ReadFile(recPath)
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			tc.tamper(&r, root, tr.dir)
			var m map[string]any
			json.Unmarshal(b, &m)
			files := []map[string]string{}
			for _, f := range r.Files {
				files = append(files, map[string]string{"name": f.Name, "original": f.Original})
			}
			m["path"], m["files"] = r.Path, files
			nb, _ := json.Marshal(m)
			os.WriteFile(recPath, nb, 0o600)
			before := tree(t, root, home)
			_, err = c.Restore(tr.ID)
			if err == nil {
				t.Errorf("restore through the tampered record succeeded")
			} else if !strings.Contains(err.Error(), tr.dir) && !strings.Contains(err.Error(), tr.ID) {
				t.Errorf("the refusal names neither the trash folder nor the session: %v", err)
			}
			if after := tree(t, root, home); after != before {
				t.Errorf("restore changed files outside the trash:\n%s\nwant\n%s", after, before)
			}
			if got, _ := os.ReadFile(filepath.Join(root, "victim")); string(got) != "precious" {
				t.Errorf("the victim changed: %q", got)
			}
		})
	}
}

// tree lists every file and folder under root, but not under skip, with its
// type, size and target (a symlink's).
func tree(t *testing.T, root, skip string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		info, _ := d.Info()
		target, _ := os.Readlink(p)
		fmt.Fprintf(&b, "%s %v %d %s\n", p, d.Type(), info.Size(), target)
		return nil
	})
	return b.String()
}

// TestTrashFolderIsNotALink: a symlink planted at $ARBOR_DIR/trash, or at a
// record, is not followed: rm refuses and leaves the session where it is, and
// a record reached through a link is not listed.
func TestTrashFolderIsNotALink(t *testing.T) {
	root := t.TempDir()
	dir, home, elsewhere := filepath.Join(root, "sessions"), filepath.Join(root, "home"), filepath.Join(root, "elsewhere")
	for _, d := range []string{dir, home, elsewhere} {
		os.MkdirAll(d, 0o700)
	}
	w := newSession(t, dir, "0195dddd-0000-7000-8000-00000000000f", "/p")
	w.user("x")
	if err := os.Symlink(elsewhere, filepath.Join(home, "trash")); err != nil {
		t.Fatal(err)
	}
	c := Open(home)
	defer c.Close()
	if _, err := c.Remove(w.path); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("rm with the trash a symlink: %v, want a refusal that says so", err)
	}
	if _, err := os.Stat(w.path); err != nil {
		t.Errorf("the session moved: %v", err)
	}
	if got := snapshot(t, elsewhere); len(got) != 0 {
		t.Errorf("files were put through the link: %v", keys(got))
	}
	if _, err := c.Trash(); err == nil {
		t.Error("listing a trash that is a symlink succeeded")
	}
	// A real trash whose record is a symlink to a record elsewhere.
	os.Remove(filepath.Join(home, "trash"))
	tr, err := c.Remove(w.path)
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(tr.dir, trashRecord)
	moved := filepath.Join(elsewhere, trashRecord)
	if err := os.Rename(rec, moved); err != nil {
		t.Fatal(err)
	}
	os.Symlink(moved, rec)
	if ts, _ := c.Trash(); len(ts) != 0 {
		t.Errorf("a record reached through a symlink is listed: %+v", ts)
	}
	if _, err := c.Restore(tr.ID); err == nil {
		t.Error("restore through a symlinked record succeeded")
	}
}

// TestIndexIsNotALink: SQLite follows symlinks, so a symlink or a hard link
// planted at $ARBOR_DIR/index.db (or its -wal, -shm) would have the index
// created in, or written over, another file. The planted name is replaced;
// its target is neither created nor changed, and listing still works.
func TestIndexIsNotALink(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(index, victim string) error
	}{
		{"a dangling symlink", func(index, victim string) error { return os.Symlink(victim, index) }},
		{"a symlink to an empty file", func(index, victim string) error {
			os.WriteFile(victim, nil, 0o600)
			return os.Symlink(victim, index)
		}},
		{"a hard link to an empty file", func(index, victim string) error {
			os.WriteFile(victim, nil, 0o600)
			return os.Link(victim, index)
		}},
		{"a dangling symlink at the -wal", func(index, victim string) error { return os.Symlink(victim, index+"-wal") }},
		{"a dangling symlink at the -shm", func(index, victim string) error { return os.Symlink(victim, index+"-shm") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir, home := filepath.Join(root, "sessions"), filepath.Join(root, "home")
			os.MkdirAll(dir, 0o700)
			os.MkdirAll(home, 0o700)
			w := newSession(t, dir, "0195dddd-0000-7000-8000-000000000010", "/p")
			w.user("x")
			victim := filepath.Join(root, "victim")
			if err := tc.plant(IndexPath(home), victim); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(victim)
			c := Open(home)
			got, err := c.List(Scope{Dir: dir}, ListOptions{})
			c.Close()
			if err != nil || len(got) != 1 {
				t.Errorf("List = %d sessions, %v; want 1", len(got), err)
			}
			after, err := os.Lstat(victim)
			switch {
			case before == nil && err == nil:
				t.Errorf("%s was created through the link", victim)
			case before != nil && (err != nil || after.Size() != 0):
				t.Errorf("%s was changed through the link: %v", victim, err)
			}
		})
	}
}

// TestRmSaysWhatItRefuses: a symlink to a session, a folder and a FIFO are
// refused with an error that names the path, says what it is (a symlink's
// target too) and touches nothing.
func TestRmSaysWhatItRefuses(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	w := newSession(t, dir, "0195dddd-0000-7000-8000-000000000011", "/p")
	w.user("x")
	link, folder, fifo := filepath.Join(dir, "link.jsonl"), filepath.Join(dir, "folder.jsonl"), filepath.Join(dir, "fifo.jsonl")
	os.Symlink(w.path, link)
	os.Mkdir(folder, 0o700)
	syscall.Mkfifo(fifo, 0o600)
	c := Open(home)
	defer c.Close()
	for p, want := range map[string]string{link: "symlink (to " + w.path + ")", folder: "a folder", fifo: "a FIFO"} {
		_, err := c.Remove(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("rm %s: %v; want it to name the path and say %q", filepath.Base(p), err, want)
		}
		if err := c.Purge(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("purge %s: %v; want %q", filepath.Base(p), err, want)
		}
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s is gone", p)
		}
	}
	if _, err := os.Stat(w.path); err != nil {
		t.Errorf("the session behind the link is gone: %v", err)
	}
}
