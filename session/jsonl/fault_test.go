package jsonl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

// faultFS wraps the real file system, records every operation and lets a test
// make writes, syncs, truncates and renames fail the way failing disks do.
type faultFS struct {
	FS
	mu  sync.Mutex
	ops []string

	// write returns how many bytes of p really reach the file and the error the
	// writer sees; nil passes every write through.
	write    func(name string, p []byte) (int, error)
	sync     func(name string) error
	syncDir  func(dir string) error
	truncate func(name string) error
	rename   func(oldpath, newpath string) error
}

func newFaultFS() *faultFS { return &faultFS{FS: OS} }

func (f *faultFS) record(op, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, op+" "+filepath.Base(name))
}

func (f *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	f.record("open", name)
	return &faultFile{File: file, fs: f, name: name}, nil
}

func (f *faultFS) Rename(oldpath, newpath string) error {
	f.record("rename", oldpath+"->"+filepath.Base(newpath))
	if f.rename != nil {
		if err := f.rename(oldpath, newpath); err != nil {
			return err
		}
	}
	return f.FS.Rename(oldpath, newpath)
}

func (f *faultFS) SyncDir(dir string) error {
	f.record("syncdir", dir)
	if f.syncDir != nil {
		if err := f.syncDir(dir); err != nil {
			return err
		}
	}
	return f.FS.SyncDir(dir)
}

type faultFile struct {
	File
	fs   *faultFS
	name string
}

func (f *faultFile) Write(p []byte) (int, error) {
	f.fs.record("write", f.name)
	if f.fs.write != nil {
		n, err := f.fs.write(f.name, p)
		if n < len(p) || err != nil {
			m, werr := f.File.Write(p[:n])
			if werr != nil {
				return m, werr
			}
			return m, err
		}
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	f.fs.record("sync", f.name)
	if f.fs.sync != nil {
		if err := f.fs.sync(f.name); err != nil {
			return err
		}
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	f.fs.record("truncate", f.name)
	if f.fs.truncate != nil {
		if err := f.fs.truncate(f.name); err != nil {
			return err
		}
	}
	return f.File.Truncate(size)
}

func (f *faultFile) Close() error {
	f.fs.record("close", f.name)
	return f.File.Close()
}

// nth returns a hook that fails the n-th call (from 1) for files whose name ends in suffix.
func nth(n int, suffix string, err error) func(string) error {
	var mu sync.Mutex
	calls := 0
	return func(name string) error {
		if !strings.HasSuffix(name, suffix) {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == n {
			return err
		}
		return nil
	}
}

// writeFault fails the n-th write to a session file, letting keep bytes through.
func writeFault(n, keep int, err error) func(string, []byte) (int, error) {
	calls := 0
	return func(name string, p []byte) (int, error) {
		if !strings.HasSuffix(name, ".jsonl") {
			return len(p), nil
		}
		calls++
		if calls == n {
			return min(keep, len(p)), err
		}
		return len(p), nil
	}
}

// seed writes a clean session with two entries and returns its path and content.
func seed(t *testing.T) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := lines(hdr, user1, asst1)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAppendFaults: a failed append returns an error naming the file, leaves the
// file exactly as it was after the last acknowledged entry, keeps the entry out
// of the log, and the session goes on working once the disk does.
func TestAppendFaults(t *testing.T) {
	enospc := fmt.Errorf("write: %w", syscall.ENOSPC)
	tests := []struct {
		name   string
		policy Durability
		fault  func(*faultFS)
		want   error // errors.Is target; nil: any error
	}{
		{"failed write, part of the line written", Never, func(f *faultFS) { f.write = writeFault(1, 17, syscall.EIO) }, syscall.EIO},
		{"short write without an error", Never, func(f *faultFS) { f.write = writeFault(1, 5, nil) }, nil},
		{"full disk", Turn, func(f *faultFS) { f.write = writeFault(1, 0, enospc) }, syscall.ENOSPC},
		{"full disk after part of the line", Always, func(f *faultFS) { f.write = writeFault(1, 100, enospc) }, syscall.ENOSPC},
		{"failed fsync, always", Always, func(f *faultFS) { f.sync = nth(1, ".jsonl", syscall.EIO) }, syscall.EIO},
		{"failed fsync at the end of a turn", Turn, func(f *faultFS) { f.sync = nth(1, ".jsonl", syscall.EIO) }, syscall.EIO},
		{"failed write and failed cut", Never, func(f *faultFS) {
			f.write = writeFault(1, 30, syscall.EIO)
			f.truncate = nth(1, ".jsonl", syscall.EIO)
		}, syscall.EIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, before := seed(t)
			ffs := newFaultFS()
			s, err := Open(path, WithFS(ffs), WithDurability(tt.policy))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			first, err := s.AppendMessage(assistant(t, "one"))
			if err != nil {
				t.Fatal(err)
			}
			acked := before + string(first.Raw()) + "\n"
			tt.fault(ffs)
			_, err = s.AppendMessage(assistant(t, "two"))
			if err == nil {
				t.Fatal("append on a failing disk succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			if got := s.Len(); got != 3 {
				t.Errorf("log has %d entries after the failed append, want 3", got)
			}
			if s.Leaf().ID != first.ID {
				t.Errorf("leaf = %s, want the last acknowledged entry %s", s.Leaf().ID, first.ID)
			}
			if ffs.truncate == nil {
				if diff := cmp.Diff(acked, readString(t, path)); diff != "" {
					t.Errorf("file after the failure (-acknowledged +got):\n%s", diff)
				}
			}

			// The disk recovers: the next append lands after the last acknowledged line.
			ffs.write, ffs.sync, ffs.truncate = nil, nil, nil
			third, err := s.AppendMessage(assistant(t, "three"))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			got := readString(t, path)
			if !strings.HasPrefix(got, acked) || !strings.HasSuffix(got, string(third.Raw())+"\n") {
				t.Errorf("file after recovery:\n%s", got)
			}
			l, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			r := l.Report()
			if diff := cmp.Diff([]string{"aaaaaaa1", "aaaaaaa2", first.ID, third.ID}, ids(l.Entries())); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if ffs.truncate != nil || strings.Contains(tt.name, "cut") {
				// The uncut fragment stays as a line of its own, never glued to the next line.
				if len(r.BadLines) != 1 || r.TornTail || r.MissingNewline {
					t.Errorf("file after recovery: %+v, want the fragment as one unreadable line", r)
				}
			} else if !r.Clean() {
				t.Errorf("file after recovery is damaged: %+v", r)
			}
		})
	}
}

// TestCreateFaults: a new session whose first write fails writes everything
// once when the disk recovers.
func TestCreateFaults(t *testing.T) {
	// The lines go to the file as many to a write(2) as fit in writeBatch: a
	// first message longer than that makes a second write.
	big := strings.Repeat("x", writeBatch)
	for _, fault := range []struct {
		name string
		text string                   // of the first message
		set  func(f *faultFS, hl int) // hl: the header line's length
	}{
		{"header write", "a", func(f *faultFS, _ int) { f.write = writeFault(1, 3, syscall.ENOSPC) }},
		{"second line", "a", func(f *faultFS, hl int) { f.write = writeFault(1, hl+3, syscall.ENOSPC) }},
		{"second write", big, func(f *faultFS, _ int) { f.write = writeFault(2, 3, syscall.ENOSPC) }},
		{"file fsync", "a", func(f *faultFS, _ int) { f.sync = nth(1, ".jsonl", syscall.EIO) }},
		{"folder fsync", "a", func(f *faultFS, _ int) { f.syncDir = nth(1, "", syscall.EIO) }},
	} {
		t.Run(fault.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "new", "s.jsonl")
			ffs := newFaultFS()
			s, err := Open(path, WithFS(ffs))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			u, err := s.AppendModelChange("p", "m")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a setup entry alone created the file: %v", err)
			}
			fault.set(ffs, len(s.Header().Raw())+1)
			if _, err := s.AppendMessage(user(t, fault.text)); err == nil {
				t.Fatal("append on a failing disk succeeded")
			}
			ffs.write, ffs.sync, ffs.syncDir = nil, nil, nil
			a, err := s.AppendMessage(user(t, "b"))
			if err != nil {
				t.Fatal(err)
			}
			want := lines(string(s.Header().Raw()), string(u.Raw()), string(a.Raw()))
			if diff := cmp.Diff(want, readString(t, path)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRewriteFaults: a whole-file rewrite that fails at any step leaves the
// original file as it was, and the backup in place.
func TestRewriteFaults(t *testing.T) {
	orig := lines(user1, asst1)
	for _, fault := range []struct {
		name string
		set  func(*faultFS)
	}{
		{"backup write", func(f *faultFS) {
			f.write = func(name string, p []byte) (int, error) {
				if strings.HasSuffix(name, ".bak.tmp") { // the backup is written to a temporary file first
					return 0, syscall.ENOSPC
				}
				return len(p), nil
			}
		}},
		{"backup fsync", func(f *faultFS) { f.sync = nth(1, ".bak.tmp", syscall.EIO) }},
		{"temporary file fsync", func(f *faultFS) { f.sync = nth(1, "s.jsonl.tmp", syscall.EIO) }},
		{"rename", func(f *faultFS) { f.rename = func(string, string) error { return syscall.EIO } }},
	} {
		t.Run(fault.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			ffs := newFaultFS()
			s, err := Open(path, WithFS(ffs))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			fault.set(ffs)
			if _, err := s.AppendMessage(assistant(t, "a")); err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want an error naming %s", err, path)
			}
			got := files(t, dir)
			if got["s.jsonl"] != orig {
				t.Errorf("the original changed after a failed rewrite:\n%s", got["s.jsonl"])
			}
			for name, data := range got {
				if name != "s.jsonl" && data != orig && data != "" {
					t.Errorf("sidecar %s holds %q", name, data)
				}
				if strings.HasSuffix(name, ".tmp") {
					t.Errorf("temporary file %s left behind", name)
				}
			}
		})
	}
}

// TestRewriteOrder checks the order of a whole-file rewrite: the backup is
// durable (written to a temporary file, synced, renamed into place, folder
// synced) before anything changes, the new content is synced before the
// rename, and the folder is synced after it (SPEC §7).
func TestRewriteOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(lines(hdrV2, user1, hookV2)), 0o600); err != nil {
		t.Fatal(err)
	}
	ffs := newFaultFS()
	s, err := Open(path, WithFS(ffs), WithDurability(Never))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ffs.ops = nil
	if _, err := s.AppendMessage(user(t, "x")); err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(dir)
	want := []string{
		"open s.jsonl.v2.bak.tmp", "write s.jsonl.v2.bak.tmp", "sync s.jsonl.v2.bak.tmp", "close s.jsonl.v2.bak.tmp",
		"rename s.jsonl.v2.bak.tmp->s.jsonl.v2.bak", "syncdir " + base,
		"open s.jsonl.tmp", "write s.jsonl.tmp", "sync s.jsonl.tmp",
		"rename s.jsonl.tmp->s.jsonl", "syncdir " + base,
		"close s.jsonl", "write s.jsonl.tmp", // the new file, now at s.jsonl, through the descriptor that wrote it
	}
	if diff := cmp.Diff(want, ffs.ops); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
}

// TestTornTailFaults: when fsck --repair cannot save a torn last line,
// nothing is cut; an append never moves it (it ends it with a newline).
func TestTornTailFaults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := lines(hdr, user1) + torn
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	ffs := newFaultFS()
	ffs.sync = nth(1, ".torn.tmp", syscall.EIO)
	s, err := Open(path, WithFS(ffs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Repair(); err == nil {
		t.Fatal("repair succeeded though the torn line could not be saved")
	}
	if got := readString(t, path); got != orig {
		t.Errorf("file changed:\n%s", got)
	}
	e, err := s.AppendMessage(assistant(t, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readString(t, path), lines(hdr, user1, torn, string(e.Raw())); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	s.Close()
}

var _ = session.ErrReadOnly
