package jsonl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The files a session may have beside it, all named after it (SPEC §7–§8):
//
//	<file>.torn        a torn last line that fsck --repair moved aside
//	<file>.bak         the original of a header-less file, before its rewrite
//	<file>.v<N>.bak    the original of a version N file, before its migration
//	<file>.corrupt     a file where nothing parsed (kept by earlier versions of arbor)
//	<file>.lock        the writer lock file of earlier versions of arbor
//	<file>.tmp         a rewrite in progress
//
// A sidecar never overwrites another: a taken name gets .1, .2, … (freeName),
// and a sidecar being written has .tmp (and its own number) after its name.
// This file is the only place that knows these names.

// TornPath is where a torn last line of path is kept.
func TornPath(path string) string { return path + ".torn" }

// BackupPath is where the original of a header-less path is kept before its rewrite.
func BackupPath(path string) string { return path + ".bak" }

// VersionBackupPath is where the original of a version v path is kept before its migration.
func VersionBackupPath(path string, v int) string { return fmt.Sprintf("%s.v%d.bak", path, v) }

var sidecarSuffix = regexp.MustCompile(`^(?:\.(?:torn|bak|corrupt|lock|v[0-9]+\.bak)(?:\.[0-9]+)?)?(?:\.tmp(?:\.[0-9]+)?)?$`)

// Sidecars returns the files beside path that belong to it, in every form
// (numbered, half-written): what must move or go with the session. Only
// regular files are sidecars: arbor writes nothing else, so a symlink, a
// folder, a FIFO or a device at a sidecar's name is someone else's and is
// neither moved nor deleted with the session (nor read: a FIFO would block).
func Sidecars(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.Type().IsRegular() || !IsSidecarName(base, e.Name()) {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out, nil
}

// IsSidecarName reports whether name is the name of one of the sidecars of a
// session file named base (both without a folder).
func IsSidecarName(base, name string) bool {
	rest, ok := strings.CutPrefix(name, base)
	return ok && base != "" && rest != "" && sidecarSuffix.MatchString(rest)
}

// IsSession reports whether the file at path is a session file: its first line
// is a session header, or some line of it is a session entry. An empty file is
// not one. It reads the file and does not follow a symlink at path.
func IsSession(path string) (bool, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	if !info.Mode().IsRegular() {
		return false, nil
	}
	if HasHeader(path) {
		return true, nil
	}
	l, err := Read(path)
	if err != nil {
		return false, err
	}
	return l.Len() > 0, nil
}

// freeName returns name, or name.1, name.2, … if it exists (a dangling
// symlink counts): a sidecar never overwrites another.
func freeName(fsys FS, name string) string {
	if _, err := fsys.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return name
	}
	for i := 1; ; i++ {
		n := name + "." + strconv.Itoa(i)
		if _, err := fsys.Lstat(n); errors.Is(err, fs.ErrNotExist) {
			return n
		}
	}
}

// createSynced creates name (which must not exist, not even as a symlink)
// with data and syncs it. When it fails, nothing it made is left; a file that
// was already at name (another process's, made since it was looked for) is
// not its own and is not removed.
func createSynced(fsys FS, name string, data []byte) error {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		_ = fsys.Remove(name)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		_ = fsys.Remove(name)
		return err
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(name)
		return err
	}
	return nil
}

// writeAtomic puts data at target through a temporary file in the same folder:
// write, fsync, rename over target, fsync the folder (SPEC §7). A crash leaves
// target either as it was or holding all of data, never a part of it; at worst
// a stray <target>.tmp remains. A symlink at target is replaced, never
// followed. Sidecars (.torn, .bak) are written this way too, so a sidecar that
// exists always holds every byte it was meant to keep.
func writeAtomic(fsys FS, target string, data []byte) error {
	tmp := freeName(fsys, target+".tmp")
	if err := createSynced(fsys, tmp, data); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, target); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	return fsys.SyncDir(filepath.Dir(target))
}

// WriteFile atomically puts data at target (see writeAtomic): for the records
// other packages keep (the trash, the archive), so they never half-exist.
func WriteFile(target string, data []byte) error { return writeAtomic(OS, target, data) }

// CreateFile puts data at target, which must not exist: written and fsynced
// under a temporary name, then linked to target (which fails with
// fs.ErrExist when a file is there, never replacing it) and the folder
// fsynced. A crash leaves target absent or whole.
func CreateFile(target string, data []byte) error {
	tmp := freeName(OS, target+".tmp")
	if err := createSynced(OS, tmp, data); err != nil {
		return err
	}
	err := os.Link(tmp, target)
	_ = os.Remove(tmp)
	if err != nil {
		return err
	}
	return OS.SyncDir(filepath.Dir(target))
}

// OpenRegular opens the regular file at path for reading. It fails on a
// symlink (never followed), a folder, a FIFO (never waited on) or a device,
// so a file that is moved or copied by name is the file that was there.
func OpenRegular(path string) (*os.File, error) {
	if info, err := os.Lstat(path); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, Kind(info.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is %s, not a regular file", path, Kind(info.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Kind names a file's type for an error ("a symlink", "a FIFO", ...).
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a file"
	}
	return "a special file"
}

// OwnDir makes sure dir, a folder arbor keeps its own files in (the trash,
// the writer records, the blobs), is a real folder: it is created (0700, with
// its parents) when missing, and a symlink or anything else at its name is
// refused, so nothing arbor writes, moves or deletes there lands in another
// place. Only the last element is checked: $ARBOR_DIR itself may be a link.
func OwnDir(dir string) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return err
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		info, err = os.Lstat(dir)
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is %s, not a folder: arbor keeps its files only in a real folder; move it away", dir, Kind(info.Mode()))
	}
	return nil
}
