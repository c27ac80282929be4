package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"syscall"
)

// RestoreOptions tune a restore.
type RestoreOptions struct {
	// Since is the last checkpoint the caller took (zero: none). Paths that
	// differ between it and the folder now changed outside the checkpoints
	// (Plan.Outside): the caller names them before they are replaced.
	Since        Hash
	MaxFileBytes int64
}

// Plan is a restore worked out but not yet done. Before is already stored,
// so whatever the restore replaces can be brought back (Restore of Before.ID).
type Plan struct {
	Root    string
	Target  *Manifest
	Before  *Manifest
	Changes []Change // from Before to Target
	Outside []Change // from the Since snapshot to Before
}

// Result is what Apply could not do without harming a file it must not
// touch: Kept lists paths left in place because they are ignored or too
// large now (so not in Before) or are folders that still hold such files.
type Result struct {
	Kept []string
}

// Plan snapshots root (Before) and works out what restoring target changes.
func (s *Store) Plan(root string, target Hash, opt RestoreOptions) (*Plan, error) {
	t, err := s.Load(target)
	if err != nil {
		return nil, err
	}
	base := opt.Since
	if base == (Hash{}) {
		base = target
	}
	before, err := s.Snapshot(root, Options{MaxFileBytes: opt.MaxFileBytes, Base: base, Durable: true})
	if err != nil {
		return nil, err
	}
	p := &Plan{Root: before.Root, Target: t, Before: before}
	if p.Changes, err = s.Diff(before, t); err != nil {
		return nil, err
	}
	if opt.Since != (Hash{}) {
		since, err := s.Load(opt.Since)
		if err != nil {
			return nil, err
		}
		if p.Outside, err = s.Diff(since, before); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Restore makes root exactly the snapshot target (but for ignored, skipped
// and .git paths, which it never touches) and returns the plan it carried
// out; Plan.Before.ID undoes it.
func (s *Store) Restore(root string, target Hash, opt RestoreOptions) (*Plan, *Result, error) {
	p, err := s.Plan(root, target, opt)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.Apply(p)
	return p, res, err
}

// Apply carries out a plan. Every write goes through an os.Root, so no
// symlink, even one the snapshot itself holds, leads a write out of the
// folder; files are written to a temporary name and renamed into place.
func (s *Store) Apply(p *Plan) (*Result, error) {
	r, err := os.OpenRoot(p.Root)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: restore %s: %w", p.Root, err)
	}
	defer r.Close()
	res := &Result{}
	var gone []*File // what must go first: deleted, or replaced by another type
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Kind == Deleted || c.Kind == Modified && (c.From.Mode.Type() != c.To.Mode.Type() || c.From.Mode&fs.ModeSymlink != 0) {
			gone = append(gone, c.From)
		}
	}
	replaced := make(map[*File]bool, len(gone))
	for _, f := range gone {
		replaced[f] = true
	}
	for _, f := range slices.Backward(gone) { // children before their folder
		err := r.Remove(f.Path)
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
		case f.Mode.IsDir() && (errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)):
			res.Kept = append(res.Kept, f.Path)
		default:
			return res, fmt.Errorf("checkpoint: restore %s: remove %s: %w", p.Root, f.Path, err)
		}
	}
	var dirs []*File
	for i := range p.Changes {
		c := &p.Changes[i]
		t := c.To
		if t == nil {
			continue
		}
		fresh := c.From == nil || replaced[c.From]
		if fresh && !t.Mode.IsDir() {
			// Not in Before yet on disk: ignored or too large now. Never replace it.
			if _, err := r.Lstat(t.Path); err == nil {
				res.Kept = append(res.Kept, t.Path)
				continue
			}
		}
		var err error
		switch {
		case t.Mode.IsDir():
			dirs = append(dirs, t)
			if fresh {
				err = r.Mkdir(t.Path, 0o700)
				if errors.Is(err, fs.ErrExist) {
					if fi, lerr := r.Lstat(t.Path); lerr == nil && fi.IsDir() {
						err = nil
					} else {
						res.Kept = append(res.Kept, t.Path)
						err = nil
					}
				}
			}
		case t.Mode&fs.ModeSymlink != 0:
			err = r.Symlink(t.Target, t.Path)
		case c.Kind == ModeOnly:
			err = r.Chmod(t.Path, perm(t.Mode))
		default:
			err = s.writeFile(r, t)
		}
		if err != nil {
			return res, fmt.Errorf("checkpoint: restore %s: %s: %w", p.Root, t.Path, err)
		}
	}
	// Folder modes last: a read-only folder must first receive its files.
	for _, d := range slices.Backward(dirs) {
		if err := r.Chmod(d.Path, perm(d.Mode)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("checkpoint: restore %s: %s: %w", p.Root, d.Path, err)
		}
	}
	return res, nil
}

func parent(p string) string { return path.Dir(p) }

func perm(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// writeFile writes a stored file in place atomically, with its mode.
func (s *Store) writeFile(r *os.Root, f *File) error {
	data, err := s.Content(f.Hash)
	if err != nil {
		return err
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := path.Join(parent(f.Path), ".arbor-restore-"+hex.EncodeToString(rnd[:]))
	w, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Chmod(tmp, perm(f.Mode))
	}
	if err == nil {
		err = r.Rename(tmp, f.Path)
	}
	if err != nil {
		r.Remove(tmp)
	}
	return err
}
