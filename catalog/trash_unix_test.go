//go:build unix

package catalog

import (
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
			c := Open(home)
			var err error
			if purge {
				err = c.Purge(w.path)
			} else {
				_, err = c.Remove(w.path)
			}
			c.Close()
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
