package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/arborlog/arbor/internal/gitproject"
	"github.com/arborlog/arbor/session"
)

// Catalog finds the sessions of one arbor home ($ARBOR_DIR): it keeps the index
// there, and the trash and archive records. The zero value is not usable; call
// Open. A Catalog is for one goroutine; several processes may share a home.
type Catalog struct {
	home    string
	idx     *indexFile
	idxErr  error      // why the index could not be opened
	pending chan error // the index write a listing left running, if any
	// Progress, when set, is told how many of the files that must be read have
	// been read, while an index is being built or brought up to date.
	Progress func(done, total int)
}

// Open returns the catalog of home (Home() when ""). The index is opened at
// first use; when it cannot be (a read-only home), the catalog works without it.
func Open(home string) *Catalog {
	if home == "" {
		home = Home()
	}
	return &Catalog{home: home}
}

// Close waits for the index to be written and closes it.
func (c *Catalog) Close() error {
	c.settle()
	if c.idx == nil {
		return nil
	}
	err := c.idx.close()
	c.idx = nil
	return err
}

// settle waits for an index write left running by a listing.
func (c *Catalog) settle() {
	if c.pending == nil {
		return
	}
	err := <-c.pending
	c.pending = nil
	if isDamage(err) {
		c.dropIndex() // the next command rebuilds it
	}
}

// index opens the index, or returns nil when there is none to be had.
func (c *Catalog) index() *indexFile {
	if c.idx == nil {
		x, err := openIndex(IndexPath(c.home))
		if err != nil {
			c.idxErr = err
			return nil
		}
		c.idx = x
	}
	return c.idx
}

// ListOptions filter a listing.
type ListOptions struct {
	Empty    bool // include sessions without a message
	Archived bool // include archived sessions
}

// List returns the sessions in scope, newest first (by Info.Modified, then by
// path). Files whose first parsable line is not a session header are not sessions.
func (c *Catalog) List(s Scope, opt ListOptions) ([]Info, error) {
	all, err := c.scan(s, false)
	if err != nil {
		return nil, err
	}
	arch, err := c.archived()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, in := range all {
		in.Archived = arch[in.abs]
		if (!opt.Empty && in.Empty()) || (!opt.Archived && in.Archived) {
			continue
		}
		out = append(out, in)
	}
	return infos(out), nil
}

// entry is a listed session with what the catalog needs beyond Info.
type entry struct {
	Info
	abs   string
	mtime int64
	fid   int64
}

func infos(es []entry) []Info {
	out := make([]Info, len(es))
	for i, e := range es {
		out[i] = e.Info
	}
	return out
}

// scan brings the index up to date with the files in scope and returns every
// session in it (empty and archived ones included), newest first. With ids,
// every entry has its index id (fid); without, the index is written while the
// caller goes on (Close waits for it), and new files have no id yet.
func (c *Catalog) scan(s Scope, ids bool) ([]entry, error) {
	c.settle()
	roots, err := s.absRoots()
	if err != nil {
		return nil, err
	}
	// Read the index while the folders are walked: both take milliseconds.
	type loaded struct {
		old map[string]*row
		err error
	}
	ch := make(chan loaded, 1)
	if x := c.index(); x != nil {
		go func() {
			old, err := x.load(roots)
			ch <- loaded{old, err}
		}()
	} else {
		ch <- loaded{}
	}
	files, _, err := s.walk()
	ld := <-ch
	if err != nil {
		return nil, err
	}
	states, fids, err := c.refresh(files, roots, ld.old, ld.err, ids)
	if err != nil {
		return nil, err
	}
	var out []entry
	mv := movedFinder{cwd: s.Cwd, gone: map[string]bool{}}
	for i, st := range states {
		if st == nil || !st.listed {
			continue
		}
		in := st.info
		if s.Dir == "" && !s.All && st.info.Cwd != s.Cwd {
			if !s.Moved || !mv.moved(st) {
				continue
			}
			in.MovedFrom = st.info.Cwd
		}
		in.Path = files[i].path
		in.FileModified = time.Unix(0, st.mtimeNS)
		out = append(out, entry{Info: in, abs: files[i].abs, mtime: st.mtimeNS, fid: fids[i]})
	}
	slices.SortFunc(out, func(a, b entry) int {
		if c := cmp.Compare(b.Modified.ms*boolI(b.Modified.valid), a.Modified.ms*boolI(a.Modified.valid)); c != 0 {
			return c
		}
		return localeCompare(filepath.Base(b.Path), filepath.Base(a.Path))
	})
	return out, nil
}

// movedFinder decides which sessions of other folders belong to the project
// at cwd. It asks git for cwd's project only when a session could be one (a
// project recorded, its folder gone), so a listing without moved folders
// starts no process.
type movedFinder struct {
	cwd     string
	gone    map[string]bool // folder → it does not exist
	project *session.Project
}

func (f *movedFinder) moved(st *state) bool {
	p, cwd := st.info.Project, st.info.Cwd
	if p.IsZero() || !filepath.IsAbs(cwd) {
		return false
	}
	gone, ok := f.gone[cwd]
	if !ok {
		// A folder that exists is another checkout (a clone, a worktree)
		// with sessions of its own, not this one's past.
		_, err := os.Stat(cwd)
		gone = errors.Is(err, fs.ErrNotExist)
		f.gone[cwd] = gone
	}
	if !gone {
		return false
	}
	if f.project == nil {
		here := gitproject.Of(f.cwd)
		f.project = &here
	}
	return p.Same(*f.project)
}

// localeCompare approximates JavaScript's String.prototype.localeCompare (ICU's
// root collation) for the ASCII file names sessions have, which pi 1.6.0 uses
// to order sessions modified at the same time (by file name, descending):
// punctuation before digits before letters, letters without regard to case
// first, then lower case before upper case, then byte order.
func localeCompare(a, b string) int {
	key := func(c byte) (int, byte) {
		switch {
		case c >= '0' && c <= '9':
			return 1, c
		case c >= 'a' && c <= 'z':
			return 2, c
		case c >= 'A' && c <= 'Z':
			return 2, c + 'a' - 'A'
		case c >= 0x80:
			return 3, c
		}
		return 0, c
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, va := key(a[i])
		cb, vb := key(b[i])
		if c := cmp.Or(cmp.Compare(ca, cb), cmp.Compare(va, vb)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] { // differ only in case: lower case first
			return -cmp.Compare(a[i], b[i])
		}
	}
	return 0
}

func boolI(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// refresh returns the state of every file, reading only the files the index
// does not know in their present form; fids are the files' index ids (0 without
// an index).
func (c *Catalog) refresh(files []file, roots []string, old map[string]*row, loadErr error, ids bool) ([]*state, []int64, error) {
	states := make([]*state, len(files))
	fids := make([]int64, len(files))
	x := c.idx
	if loadErr != nil {
		// Busy beyond the timeout: list without the index this time.
		// Damaged: delete it; the next command rebuilds it.
		if isDamage(loadErr) {
			c.dropIndex()
		}
		x, old = nil, nil
	}
	var todo []*file
	var todoIdx []int
	var prev []*state
	for i := range files {
		f := &files[i]
		if r := old[f.abs]; r != nil {
			fids[i] = r.fid
			if r.st.matches(*f) {
				r.st.info.Path = f.path
				states[i] = &r.st
				continue
			}
			if x.resume(r) {
				prev = append(prev, &r.st)
			} else {
				prev = append(prev, nil)
			}
		} else {
			prev = append(prev, nil)
		}
		todo = append(todo, f)
		todoIdx = append(todoIdx, i)
	}
	var report progress
	if c.Progress != nil && len(todo) > 0 {
		report = c.Progress
	}
	list := make([]file, len(todo))
	for i, f := range todo {
		list[i] = *f
	}
	read, err := summarizeAll(list, prev, report)
	if err != nil {
		return nil, nil, err
	}
	for k, i := range todoIdx {
		states[i] = read[k]
	}
	if x == nil {
		return states, fids, nil
	}
	present := make(map[string]bool, len(files))
	for _, f := range files {
		present[f.abs] = true
	}
	var gone []string
	for p := range old {
		if !present[p] {
			gone = append(gone, p)
		}
	}
	if !ids {
		c.pending = make(chan error, 1)
		go func() {
			_, err := x.store(todo, read, old, gone)
			c.pending <- err
		}()
		return states, fids, nil
	}
	newFids, err := x.store(todo, read, old, gone)
	if err != nil {
		// The listing is right without the index; a damaged index is rebuilt next time.
		if isDamage(err) {
			c.dropIndex()
		}
		return states, fids, nil
	}
	for k, i := range todoIdx {
		fids[i] = newFids[k]
	}
	return states, fids, nil
}

func (c *Catalog) dropIndex() {
	c.settle()
	if c.idx != nil {
		c.idx.close()
		c.idx = nil
	}
	removeIndex(IndexPath(c.home))
}

// UpdateStats says what Update did.
type UpdateStats struct {
	Sessions  int   `json:"sessions"`
	FilesRead int   `json:"filesRead"`
	BytesRead int64 `json:"bytesRead"`
}

// Latest returns the session in scope whose file was modified last (pi's
// continueRecent, without its 512-byte limit on the header), archived ones aside.
func (c *Catalog) Latest(s Scope) (Info, error) {
	es, err := c.scan(s, false)
	if err != nil {
		return Info{}, err
	}
	arch, err := c.archived()
	if err != nil {
		return Info{}, err
	}
	var best *entry
	for i := range es {
		e := &es[i]
		if arch[e.abs] {
			continue
		}
		if best == nil || e.mtime > best.mtime {
			best = e
		}
	}
	if best == nil {
		return Info{}, fmt.Errorf("%w in %s", ErrNotFound, s)
	}
	return best.Info, nil
}
