package catalog

import (
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
	"github.com/gofrs/flock"
)

// The trash is $ARBOR_DIR/trash/<time>_<session id>/: the session file, its
// sidecars (.torn, .bak, .corrupt, .v<N>.bak) and trash.json, which records
// where they came from. Removing moves; only Purge deletes.

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

// sidecars returns the files that belong with a session file: what recovery
// kept (.torn, .bak, .corrupt) and the originals of migrations (.v<N>.bak).
func sidecars(path string) []string {
	var out []string
	for _, s := range []string{".torn", ".bak", ".corrupt"} {
		if _, err := os.Lstat(path + s); err == nil {
			out = append(out, path+s)
		}
	}
	if vs, _ := filepath.Glob(globEscape(path) + ".v*.bak"); len(vs) > 0 {
		out = append(out, vs...)
	}
	return out
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// lockWriter takes the session's writer lock (SPEC §7) so that no arbor writer
// has the file open while it moves. It fails, naming the holder, when one has.
func lockWriter(path string) (*flock.Flock, error) {
	fl := flock.New(path+".lock", flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("catalog: lock %s.lock: %w", path, err)
	}
	if !ok {
		le := &jsonl.LockError{Path: path}
		if b, err := os.ReadFile(path + ".lock"); err == nil {
			_ = json.Unmarshal(b, &le.Holder)
		}
		return nil, le
	}
	return fl, nil
}

// unlockAndRemove drops the lock file of a session that is gone.
func unlockAndRemove(fl *flock.Flock) {
	os.Remove(fl.Path())
	fl.Unlock()
}

// Remove moves the session at path, with its sidecars, to the trash.
func (c *Catalog) Remove(path string) (Trashed, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Trashed{}, err
	}
	st, err := summarize(file{path: path, abs: abs}, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return Trashed{}, fmt.Errorf("catalog: %s: no such session file", path)
	}
	if err != nil {
		return Trashed{}, fmt.Errorf("catalog: %w", err)
	}
	fl, err := lockWriter(abs)
	if err != nil {
		return Trashed{}, err
	}
	t := Trashed{ID: st.sum.ID, Name: st.sum.Name, Cwd: st.sum.Cwd, Path: abs, RemovedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}
	label := t.ID
	if label == "" {
		label = strings.TrimSuffix(filepath.Base(abs), ".jsonl")
	}
	t.dir = filepath.Join(c.trashDir(), strings.NewReplacer(":", "-", ".", "-").Replace(t.RemovedAt)+"_"+label)
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		fl.Unlock()
		return Trashed{}, fmt.Errorf("catalog: trash: %w", err)
	}
	for _, p := range append([]string{abs}, sidecars(abs)...) {
		t.Files = append(t.Files, trashedFile{Name: filepath.Base(p), Original: p})
	}
	// The record goes first: whatever happens next, the trash says where each file belongs.
	if err := writeRecord(t); err != nil {
		fl.Unlock()
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
			fl.Unlock()
			return Trashed{}, fmt.Errorf("catalog: move %s to the trash: %w", f.Original, err)
		}
	}
	unlockAndRemove(fl)
	return t, nil
}

func writeRecord(t Trashed) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(t.dir, trashRecord), append(b, '\n'))
}

// Purge deletes the session at path and its sidecars for good.
func (c *Catalog) Purge(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(abs); err != nil {
		return fmt.Errorf("catalog: %s: no such session file", path)
	}
	fl, err := lockWriter(abs)
	if err != nil {
		return err
	}
	defer unlockAndRemove(fl)
	for _, p := range append(sidecars(abs), abs) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("catalog: delete %s: %w", p, err)
		}
	}
	return nil
}

// Trash lists the removed sessions, most recently removed first.
func (c *Catalog) Trash() ([]Trashed, error) {
	ents, err := os.ReadDir(c.trashDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: trash: %w", err)
	}
	var out []Trashed
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(c.trashDir(), e.Name())
		b, err := os.ReadFile(filepath.Join(dir, trashRecord))
		if err != nil {
			continue
		}
		var t Trashed
		if json.Unmarshal(b, &t) != nil {
			continue
		}
		t.dir = dir
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Trashed) int { return strings.Compare(b.RemovedAt, a.RemovedAt) })
	return out, nil
}

// findTrashed finds a removed session by its id, a unique id prefix, its name
// or its original path.
func (c *Catalog) findTrashed(arg string) (Trashed, error) {
	ts, err := c.Trash()
	if err != nil {
		return Trashed{}, err
	}
	abs, _ := filepath.Abs(arg)
	var exact, prefix, named []Trashed
	for _, t := range ts {
		switch {
		case t.ID == arg || t.Path == abs:
			exact = append(exact, t)
		case strings.HasPrefix(t.ID, arg):
			prefix = append(prefix, t)
		case t.Name == arg:
			named = append(named, t)
		}
	}
	for _, set := range [][]Trashed{exact, prefix, named} {
		if len(set) == 1 {
			return set[0], nil
		}
		if len(set) > 1 {
			var b strings.Builder
			for _, s := range set {
				fmt.Fprintf(&b, "; %s (%s, removed %s)", s.ID, s.Path, s.RemovedAt)
			}
			return Trashed{}, fmt.Errorf("catalog: %q matches %d removed sessions%s; give a longer id", arg, len(set), b.String())
		}
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
// prefix, its name, or its original path. It refuses to overwrite a file.
func (c *Catalog) Restore(arg string) (Trashed, error) {
	t, err := c.findTrashed(arg)
	if err != nil {
		return Trashed{}, err
	}
	for _, f := range t.Files {
		if _, err := os.Lstat(f.Original); err == nil {
			return Trashed{}, fmt.Errorf("catalog: cannot restore %s: %s exists; move it away first", t.ID, f.Original)
		}
	}
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o700); err != nil {
		return Trashed{}, fmt.Errorf("catalog: restore %s: %w", t.ID, err)
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

// moveFile renames src to dst, copying across file systems. It never replaces dst.
func moveFile(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%s exists", dst)
	}
	err := os.Rename(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	in, err := os.Open(src)
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
	if err := out.Sync(); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return err
	}
	os.Chtimes(dst, info.ModTime(), info.ModTime())
	return os.Remove(src)
}
