package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// File is one entry of a snapshot: a regular file, a folder or a symlink.
type File struct {
	Path   string      // slash-separated, relative to the root
	Mode   fs.FileMode // type and permission bits
	Size   int64
	MTime  int64  // modification time, Unix nanoseconds
	Inode  uint64 // with size, mtime and mode: the stat that says "unchanged"
	Hash   Hash   // content, regular files only
	Target string // symlinks only
}

// Skipped is a file left out of a snapshot for its size.
type Skipped struct {
	Path string
	Size int64
}

// Manifest is a snapshot: the state of a folder at one moment.
type Manifest struct {
	ID      Hash
	Root    string
	Taken   time.Time
	Files   []File // sorted by Path
	Skipped []Skipped
}

// Options tune a snapshot.
type Options struct {
	// MaxFileBytes leaves larger files out (listed in Manifest.Skipped);
	// 0 means DefaultMaxFileBytes, a negative value no limit.
	MaxFileBytes int64
	// Base is a previous snapshot of the same root (the zero Hash: none):
	// files whose stat it matches are not read again.
	Base Hash
	// Durable syncs every object written to disk before the snapshot
	// returns. Restore's own snapshot of what it replaces is always durable;
	// the agent's checkpoints are not (a crash can then cost a checkpoint's
	// content, detected as ErrCorrupt when read, never wrong bytes).
	Durable bool
}

// DefaultMaxFileBytes is the size above which a file is skipped by default.
const DefaultMaxFileBytes = 10 << 20

// Snapshot records the state of the folder root and returns it, stored.
func (s *Store) Snapshot(root string, opt Options) (*Manifest, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: snapshot %s: %w", root, err)
	}
	var base map[string]*File
	var baseTaken int64
	var bm *Manifest
	if opt.Base != (Hash{}) {
		bm, err = s.Load(opt.Base)
		if err != nil {
			return nil, err
		}
		base = make(map[string]*File, len(bm.Files))
		for i := range bm.Files {
			base[bm.Files[i].Path] = &bm.Files[i]
		}
		baseTaken = bm.Taken.UnixNano()
	}
	limit := opt.MaxFileBytes
	if limit == 0 {
		limit = DefaultMaxFileBytes
	}
	m := &Manifest{Root: root, Taken: time.Now()}
	w := walker{store: s, root: root, base: base, baseTaken: baseTaken, limit: limit, m: m, durable: opt.Durable}
	if err := w.walk(""); err != nil {
		return nil, err
	}
	if bm != nil && bm.Root == root && sameFiles(bm, m) {
		// Nothing changed: the base is this snapshot, no new object is written.
		return bm, nil
	}
	data := m.encode()
	m.ID = sha256.Sum256(data)
	if err := s.putObject(m.ID, kindBlob, data, opt.Durable); err != nil {
		return nil, err
	}
	return m, nil
}

func sameFiles(a, b *Manifest) bool {
	return slices.Equal(a.Files, b.Files) && slices.Equal(a.Skipped, b.Skipped)
}

type walker struct {
	store     *Store
	root      string
	base      map[string]*File
	baseTaken int64
	limit     int64
	m         *Manifest
	ig        ignorer
	durable   bool
}

// walk records the folder rel (slash path, "" for the root) and below.
func (w *walker) walk(rel string) error {
	dir := filepath.Join(w.root, filepath.FromSlash(rel))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: snapshot %s: %w", dir, err)
	}
	pushed := 0
	if rel == "" {
		if data, err := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude")); err == nil {
			w.ig = append(w.ig, parseIgnore("", data))
			pushed++
		}
	}
	for _, name := range []string{".gitignore", ".arborignore"} {
		if _, ok := slices.BinarySearchFunc(ents, name, func(e fs.DirEntry, n string) int { return strings.Compare(e.Name(), n) }); !ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue // a folder or an unreadable file: no rules, as git
		}
		w.ig = append(w.ig, parseIgnore(rel, data))
		pushed++
	}
	defer func() { w.ig = w.ig[:len(w.ig)-pushed] }()
	for _, e := range ents {
		name := e.Name()
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if rel == "" && name == ".git" {
			continue
		}
		isDir := e.IsDir()
		if w.ig.ignored(p, isDir) {
			continue
		}
		info, err := os.Lstat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while we looked
		}
		if err != nil {
			return fmt.Errorf("checkpoint: snapshot %s: %w", p, err)
		}
		f := File{Path: p, Mode: info.Mode(), MTime: info.ModTime().UnixNano()}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			f.Inode = uint64(st.Ino)
		}
		switch {
		case info.IsDir():
			w.m.Files = append(w.m.Files, f)
			if err := w.walk(p); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(filepath.Join(dir, name))
			if err != nil {
				return fmt.Errorf("checkpoint: snapshot %s: %w", p, err)
			}
			f.Target = t
			w.m.Files = append(w.m.Files, f)
		case info.Mode().IsRegular():
			f.Size = info.Size()
			if w.limit > 0 && f.Size > w.limit {
				w.m.Skipped = append(w.m.Skipped, Skipped{Path: p, Size: f.Size})
				continue
			}
			if err := w.hash(&f, filepath.Join(dir, name)); err != nil {
				return err
			}
			w.m.Files = append(w.m.Files, f)
		default:
			// Sockets, pipes and devices have no content to restore.
		}
	}
	return nil
}

// hash fills f.Hash: from the base snapshot when the stat matches and the
// file was not modified in the base's own instant (git's "racily clean"
// entries), else by reading and storing the file.
func (w *walker) hash(f *File, full string) error {
	if b := w.base[f.Path]; b != nil && b.Mode == f.Mode && b.Size == f.Size && b.MTime == f.MTime &&
		b.Inode == f.Inode && f.MTime < w.baseTaken-int64(10*time.Millisecond) {
		f.Hash = b.Hash
		return nil
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return fmt.Errorf("checkpoint: snapshot %s: %w", f.Path, err)
	}
	// The stat must describe what was read; a file written meanwhile would
	// otherwise be trusted later with the wrong hash.
	f.Size = int64(len(data))
	f.Hash = sha256.Sum256(data)
	return w.store.putContent(f.Hash, data, w.durable)
}

// Load reads a stored snapshot.
func (s *Store) Load(id Hash) (*Manifest, error) {
	if !s.has(id) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	kind, data, err := s.readObject(id)
	if err != nil {
		return nil, err
	}
	if kind != kindBlob || Hash(sha256.Sum256(data)) != id {
		return nil, fmt.Errorf("%w: snapshot %s", ErrCorrupt, id)
	}
	m, err := decodeManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot %s: %v", ErrCorrupt, id, err)
	}
	m.ID = id
	return m, nil
}

const manifestMagic = "arbor-checkpoint 1\n"

// encode writes the manifest as its magic line and then varint-framed
// fields: a binary form because a 10,000-file tree is read and written at
// every checkpoint, and JSON would be most of its cost.
func (m *Manifest) encode() []byte {
	b := make([]byte, 0, 64+len(m.Files)*80)
	b = append(b, manifestMagic...)
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	str(m.Root)
	b = binary.AppendVarint(b, m.Taken.UnixNano())
	b = binary.AppendUvarint(b, uint64(len(m.Files)))
	for _, f := range m.Files {
		str(f.Path)
		b = binary.AppendUvarint(b, uint64(f.Mode))
		b = binary.AppendVarint(b, f.Size)
		b = binary.AppendVarint(b, f.MTime)
		b = binary.AppendUvarint(b, f.Inode)
		switch {
		case f.Mode.IsRegular():
			b = append(b, f.Hash[:]...)
		case f.Mode&fs.ModeSymlink != 0:
			str(f.Target)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(m.Skipped)))
	for _, k := range m.Skipped {
		str(k.Path)
		b = binary.AppendVarint(b, k.Size)
	}
	return b
}

var errShort = errors.New("manifest ends early")

func decodeManifest(data []byte) (*Manifest, error) {
	if !bytes.HasPrefix(data, []byte(manifestMagic)) {
		return nil, errors.New("not a manifest")
	}
	d := decoder{b: data[len(manifestMagic):]}
	m := &Manifest{Root: d.str()}
	m.Taken = time.Unix(0, d.varint())
	n := d.count()
	m.Files = make([]File, 0, n)
	for range n {
		f := File{Path: d.str(), Mode: fs.FileMode(d.uvarint()), Size: d.varint(), MTime: d.varint(), Inode: d.uvarint()}
		switch {
		case f.Mode.IsRegular():
			if len(d.b) < len(f.Hash) {
				return nil, errShort
			}
			copy(f.Hash[:], d.b)
			d.b = d.b[len(f.Hash):]
		case f.Mode&fs.ModeSymlink != 0:
			f.Target = d.str()
		}
		if d.err != nil {
			return nil, d.err
		}
		if !validPath(f.Path) {
			return nil, fmt.Errorf("bad path %q", f.Path)
		}
		m.Files = append(m.Files, f)
	}
	k := d.count()
	for range k {
		m.Skipped = append(m.Skipped, Skipped{Path: d.str(), Size: d.varint()})
	}
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// validPath guards restores against a damaged manifest: a path must stay
// under the root and never name .git.
func validPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	for i, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || (i == 0 && seg == ".git") {
			return false
		}
	}
	return true
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) { // every entry takes at least a byte
		d.err = errShort
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
