package catalog

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/arborlog/arbor/session/jsonl"
)

// The trash is $ARBOR_DIR/trash/<time>_<random>/: the session file, its
// sidecars (every file jsonl.Sidecars names) and trash.json, which records
// where they came from. The folder's name is generated, never taken from the
// session. A record is used only when it can only put back what rm took: the
// session file at its path and, beside it, files named as its sidecars, each
// a regular file in the trash folder (and the session a session). The trash
// folder, its folders and records are never symlinks followed. Removing
// moves; only Purge deletes.

// Trashed is a removed session.
type Trashed struct {
	ID        string        `json:"id"`
	Name      string        `json:"name,omitempty"`
	Cwd       string        `json:"cwd"`
	Path      string        `json:"path"` // where it was and where Restore puts it back
	RemovedAt string        `json:"removedAt"`
	Files     []trashedFile `json:"files"`
	dir       string
}

type trashedFile struct {
	Name     string `json:"name"`     // in the trash folder
	Original string `json:"original"` // absolute path it came from
}

const trashRecord = "trash.json"

func (c *Catalog) trashDir() string { return filepath.Join(c.home, "trash") }

// ErrNotSessionFile is returned when rm or purge is given a file that is not a session.
var ErrNotSessionFile = errors.New("catalog: not a session file")

// sessionFile checks that path is a regular session file (not a symlink,
// not some other file) before the trash moves or deletes it.
func sessionFile(path string) error {
	if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		// The safe reading of "remove this link": neither the link nor the
		// file it names is touched; the user says which one is meant.
		target, _ := os.Readlink(path)
		return fmt.Errorf("%w: %s is a symlink (to %s); arbor trashes and deletes only a session file itself: give the session's own path, or remove the link with rm(1)", ErrNotSessionFile, path, target)
	} else if err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is %s (arbor only trashes and deletes session files; check the path)", ErrNotSessionFile, path, jsonl.Kind(info.Mode()))
	}
	ok, err := jsonl.IsSession(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("catalog: %s: no such session file", path)
	}
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	if !ok {
		return fmt.Errorf("%w: %s holds no session (arbor only trashes and deletes session files; check the path)", ErrNotSessionFile, path)
	}
	return nil
}

// Remove moves the session at path, with its sidecars, to the trash.
func (c *Catalog) Remove(path string) (Trashed, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Trashed{}, err
	}
	if err := sessionFile(abs); err != nil {
		return Trashed{}, err
	}
	st, err := summarize(file{path: path, abs: abs}, nil)
	if err != nil {
		return Trashed{}, fmt.Errorf("catalog: %w", err)
	}
	lk, err := jsonl.LockFile(abs)
	if err != nil {
		return Trashed{}, err
	}
	defer lk.Unlock()
	return c.removeLocked(abs, st.sum)
}

// removeLocked is Remove for a caller that holds abs's writer lock.
func (c *Catalog) removeLocked(abs string, sum summary) (Trashed, error) {
	t := Trashed{ID: sum.ID, Name: sum.Name, Cwd: sum.Cwd, Path: abs, RemovedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return Trashed{}, fmt.Errorf("catalog: trash: %w", err)
	}
	t.dir = filepath.Join(c.trashDir(), strings.NewReplacer(":", "-", ".", "-").Replace(t.RemovedAt)+"_"+hex.EncodeToString(rnd[:]))
	if err := jsonl.OwnDir(c.trashDir()); err != nil {
		return Trashed{}, fmt.Errorf("catalog: trash: %w", err)
	}
	if err := os.Mkdir(t.dir, 0o700); err != nil {
		return Trashed{}, fmt.Errorf("catalog: trash: %w", err)
	}
	side, err := jsonl.Sidecars(abs)
	if err != nil {
		os.Remove(t.dir)
		return Trashed{}, fmt.Errorf("catalog: %w", err)
	}
	for _, p := range append([]string{abs}, side...) {
		t.Files = append(t.Files, trashedFile{Name: filepath.Base(p), Original: p})
	}
	// The record goes first: whatever happens next, the trash says where each file belongs.
	if err := writeRecord(t); err != nil {
		os.Remove(t.dir)
		return Trashed{}, err
	}
	for i, f := range t.Files {
		if err := moveFile(f.Original, filepath.Join(t.dir, f.Name)); err != nil {
			// Put back what already moved, so nothing is left half-removed.
			for _, g := range t.Files[:i] {
				moveFile(filepath.Join(t.dir, g.Name), g.Original)
			}
			os.Remove(filepath.Join(t.dir, trashRecord))
			os.Remove(t.dir)
			return Trashed{}, fmt.Errorf("catalog: move %s to the trash: %w", f.Original, err)
		}
	}
	return t, nil
}

func writeRecord(t Trashed) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := jsonl.WriteFile(filepath.Join(t.dir, trashRecord), append(b, '\n')); err != nil {
		return fmt.Errorf("catalog: write %s: %w", filepath.Join(t.dir, trashRecord), err)
	}
	return nil
}

// Purge deletes the session at path and every sidecar it has, for good.
func (c *Catalog) Purge(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if err := sessionFile(abs); err != nil {
		return err
	}
	lk, err := jsonl.LockFile(abs)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	side, err := jsonl.Sidecars(abs)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	for _, p := range append(side, abs) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("catalog: delete %s: %w", p, err)
		}
	}
	return nil
}

// Trash lists the removed sessions, most recently removed first.
func (c *Catalog) Trash() ([]Trashed, error) {
	out, _, err := c.trash()
	return out, err
}

// trash lists the removed sessions and the trash folders whose record is
// missing, damaged or edited to send files elsewhere (not followed).
func (c *Catalog) trash() (out []Trashed, ignored []string, err error) {
	if _, err := os.Lstat(c.trashDir()); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err := jsonl.OwnDir(c.trashDir()); err != nil {
		return nil, nil, fmt.Errorf("catalog: trash: %w", err)
	}
	ents, err := os.ReadDir(c.trashDir())
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: trash: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(c.trashDir(), e.Name())
		b, err := readRegular(filepath.Join(dir, trashRecord))
		var t Trashed
		if err != nil || json.Unmarshal(b, &t) != nil || !t.valid() {
			ignored = append(ignored, dir)
			continue
		}
		t.dir = dir
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Trashed) int { return strings.Compare(b.RemovedAt, a.RemovedAt) })
	return out, ignored, nil
}

// readRegular reads the regular file at path, never through a symlink.
func readRegular(path string) ([]byte, error) {
	f, err := jsonl.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// valid reports whether a trash record can only put back what rm took: the
// session file first, at Path, then sidecars of it (jsonl.IsSidecarName)
// beside it, each once, every file inside its trash folder. A record edited
// to send a file anywhere else is not used.
func (t Trashed) valid() bool {
	if !filepath.IsAbs(t.Path) || filepath.Clean(t.Path) != t.Path || len(t.Files) == 0 ||
		t.Files[0].Original != t.Path || strings.ContainsRune(t.Path, 0) {
		return false
	}
	dir, base := filepath.Split(t.Path)
	seen := map[string]bool{}
	for i, f := range t.Files {
		if f.Name == "" || f.Name == "." || f.Name == ".." || f.Name == trashRecord || filepath.Base(f.Name) != f.Name ||
			strings.ContainsAny(f.Name, "/\\\x00") || seen[f.Name] || f.Original != filepath.Join(dir, f.Name) ||
			(i == 0) != (f.Name == base) || (i > 0 && !jsonl.IsSidecarName(base, f.Name)) {
			return false
		}
		seen[f.Name] = true
	}
	return true
}

// findTrashed finds a removed session by its id, a unique id prefix, its name
// or its original path.
func (c *Catalog) findTrashed(arg string) (Trashed, error) {
	ts, ignored, err := c.trash()
	if err != nil {
		return Trashed{}, err
	}
	abs, _ := filepath.Abs(arg)
	var exact, other []Trashed
	for _, t := range ts {
		switch {
		case t.ID == arg || t.Path == abs:
			exact = append(exact, t)
		case SameName(t.Name, arg) || strings.HasPrefix(t.ID, arg):
			other = append(other, t)
		}
	}
	for _, set := range [][]Trashed{exact, other} {
		if len(set) == 1 {
			return set[0], nil
		}
		if len(set) > 1 {
			var b strings.Builder
			for _, s := range set {
				fmt.Fprintf(&b, "; %s (%s, removed %s)", s.ID, s.Path, s.RemovedAt)
			}
			return Trashed{}, fmt.Errorf("catalog: %q matches %d removed sessions%s; give the whole id", arg, len(set), b.String())
		}
	}
	if len(ignored) > 0 {
		return Trashed{}, fmt.Errorf("%w: %q is not in the trash ('arbor restore --list' shows what is); %d folder(s) there, such as %s, hold a record arbor does not follow (missing, damaged, or edited to put files elsewhere): look at them by hand", ErrNotFound, arg, len(ignored), ignored[0])
	}
	return Trashed{}, fmt.Errorf("%w: %q is not in the trash ('arbor restore --list' shows what is)", ErrNotFound, arg)
}

// PurgeTrashed deletes a removed session from the trash for good.
func (c *Catalog) PurgeTrashed(arg string) (Trashed, error) {
	t, err := c.findTrashed(arg)
	if err != nil {
		return Trashed{}, err
	}
	for _, f := range t.Files {
		if err := os.Remove(filepath.Join(t.dir, f.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Trashed{}, fmt.Errorf("catalog: delete %s: %w", filepath.Join(t.dir, f.Name), err)
		}
	}
	os.Remove(filepath.Join(t.dir, trashRecord))
	os.Remove(t.dir)
	return t, nil
}

// Restore puts a removed session back where it was. arg is its id, a unique id
// prefix, its name, or its original path. It refuses to overwrite a file, and
// creates nothing but the recorded files: the folder they were in must exist.
func (c *Catalog) Restore(arg string) (Trashed, error) {
	t, err := c.findTrashed(arg)
	if err != nil {
		return Trashed{}, err
	}
	for i, f := range t.Files {
		in := filepath.Join(t.dir, f.Name)
		if info, err := os.Lstat(in); err != nil || !info.Mode().IsRegular() {
			return Trashed{}, fmt.Errorf("catalog: cannot restore %s: %s in the trash is missing or not a regular file; 'arbor rm --purge %s' deletes what is left", t.ID, in, t.ID)
		}
		if i == 0 {
			if ok, _ := jsonl.IsSession(in); !ok {
				return Trashed{}, fmt.Errorf("catalog: cannot restore %s: %s in the trash is not a session file; 'arbor rm --purge %s' deletes what is left", t.ID, in, t.ID)
			}
		}
		if _, err := os.Lstat(f.Original); err == nil {
			return Trashed{}, fmt.Errorf("catalog: cannot restore %s: %s exists; move it away first", t.ID, f.Original)
		}
	}
	// The folder is not made again: a restore creates the recorded files and nothing else.
	if info, err := os.Stat(filepath.Dir(t.Path)); err != nil || !info.IsDir() {
		return Trashed{}, fmt.Errorf("catalog: cannot restore %s: its folder %s is gone; make it again (mkdir -p) and restore", t.ID, filepath.Dir(t.Path))
	}
	for i, f := range t.Files {
		if err := moveFile(filepath.Join(t.dir, f.Name), f.Original); err != nil {
			for _, g := range t.Files[:i] {
				moveFile(g.Original, filepath.Join(t.dir, g.Name))
			}
			return Trashed{}, fmt.Errorf("catalog: restore %s: %w", f.Original, err)
		}
	}
	os.Remove(filepath.Join(t.dir, trashRecord))
	os.Remove(t.dir)
	return t, nil
}

// rename and copied are the file system calls moveFile makes; tests replace
// them (a rename across file systems, another writer appending mid-copy).
var (
	rename = os.Rename
	copied = func(src string) {}
)

// moveFile renames src to dst, copying across file systems. It never replaces dst.
//
// A copy keeps src open: what another program (pi, without arbor's lock)
// appends to it while it is copied, or through a descriptor it opened before
// src was removed, is copied after it, up to a last look after the removal.
func moveFile(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%s exists", dst)
	}
	err := rename(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	// Across file systems the bytes are copied: only a regular file's, never
	// through a symlink, never waiting on a FIFO.
	in, err := jsonl.OpenRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	copied(src)
	// What was appended meanwhile (io.Copy goes on from where it stopped).
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := os.Remove(src); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	// The last look: bytes that landed between the copy and the removal.
	_, cerr := io.Copy(out, in)
	if err := out.Sync(); cerr == nil {
		cerr = err
	}
	if err := out.Close(); cerr == nil {
		cerr = err
	}
	if cerr != nil {
		return fmt.Errorf("%s was copied to %s and removed, but what was appended to it meanwhile may be missing: %w", src, dst, cerr)
	}
	os.Chtimes(dst, info.ModTime(), info.ModTime())
	return nil
}
