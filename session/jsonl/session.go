package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/arborlog/arbor/internal/gitproject"
	"github.com/arborlog/arbor/session"
)

// Session is a session.Log backed by a file. Every append goes to the file
// before the log shows it; Close releases the writer lock.
type Session struct {
	*session.Log
	path  string
	store *store
}

// Option configures how a session is opened or created.
type Option func(*config)

type config struct {
	fs       FS
	policy   Durability
	deferred bool
	cwd      string
	header   []session.Option
}

// WithDurability sets when appends are fsynced (default Turn).
func WithDurability(d Durability) Option { return func(c *config) { c.policy = d } }

// WithFS replaces the file system (for fault-injection tests).
func WithFS(f FS) Option { return func(c *config) { c.fs = f } }

// Immediate writes a new session's file at its first append instead of waiting
// for the first user or assistant message.
func Immediate() Option { return func(c *config) { c.deferred = false } }

// WithCwd sets the working directory recorded for a session whose file has no
// usable header (default: the process's working directory).
func WithCwd(cwd string) Option { return func(c *config) { c.cwd = cwd } }

// WithLog passes options to the session.Log: fields of a new session's
// header (session.WithID, session.WithParent), its clock (session.WithClock).
// The store is always the file's.
func WithLog(opts ...session.Option) Option {
	return func(c *config) { c.header = append(c.header, opts...) }
}

func newConfig(opts []Option) config {
	c := config{fs: OS, policy: Turn, deferred: true}
	for _, o := range opts {
		o(&c)
	}
	if c.cwd == "" {
		c.cwd, _ = os.Getwd()
	}
	return c
}

// Path returns the session's file.
func (s *Session) Path() string { return s.path }

// Close syncs and closes the file and releases the writer lock. A new session
// closed while it still held entries back for its first user or assistant
// message returns ErrUnwritten (they are not written: Flush first to keep them).
func (s *Session) Close() error { return s.store.close() }

// Flush writes a new session's file now, even before its first user or assistant message.
func (s *Session) Flush() error { return s.store.flush() }

// Repair applies now the repairs the first append would apply (SPEC §8), and
// one only it applies: it moves a torn last line to <file>.torn (when the file
// has stopped growing), adds a missing final newline, rewrites a header-less
// or old-version file after backing it up, or writes a header to an empty
// file. It returns what it did, one sentence per repair.
func (s *Session) Repair() ([]string, error) {
	if err := s.Log.ReadOnly(); err != nil {
		return nil, err
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, fmt.Errorf("jsonl: %s: session is closed", s.path)
	}
	n := len(st.repairs)
	var err error
	switch {
	case st.created && st.repair != repairRewrite:
		// Entries others appended are in the file already; fsck reads it again.
		if _, err = st.readOthers(); err == nil {
			if err = st.moveTornTail(); err == nil {
				err = st.fix()
			}
		}
	case st.created:
		err = st.fix()
	case st.repair == repairBlankFile:
		err = st.create()
	}
	return slices.Clone(st.repairs[n:]), err
}

// Repairs returns what this session's repairs have done so far (see Repair).
func (s *Session) Repairs() []string {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return slices.Clone(s.store.repairs)
}

// Dir returns the default folder for a project's sessions under root
// (SPEC §1): root/--<cwd with / \ : replaced by ->--.
func Dir(root, cwd string) string {
	enc := strings.TrimLeft(cwd, `/\`)
	if len(cwd) > 0 && (cwd[0] == '/' || cwd[0] == '\\') {
		enc = cwd[1:]
	}
	enc = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(enc)
	return filepath.Join(root, "--"+enc+"--")
}

// FileName returns <ts>_<id>.jsonl for a header timestamp and session id,
// with ':' and '.' in the timestamp replaced by '-' as pi does. The
// timestamp is read from a header too (a database's, on pull), so every
// other character that is not a letter, a digit, '+', '-' or '_' becomes '-'
// as well (a '/' would leave the folder; pi's own timestamps have none), and
// it is cut to 64 bytes. The id must be SafeID.
func FileName(timestamp, id string) string {
	ts := []byte(timestamp)
	if len(ts) > 64 {
		ts = ts[:64]
	}
	for i, c := range ts {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '_') {
			ts[i] = '-'
		}
	}
	return string(ts) + "_" + id + ".jsonl"
}

// sessionFile is where a new session with header h goes in dir. The id
// becomes part of a file name, so one that could leave dir or hide the file
// (a path separator, "..", a control character) is refused.
func sessionFile(dir string, h session.Header) (string, error) {
	if !SafeID(h.ID) {
		return "", fmt.Errorf("jsonl: session id %q cannot name a file: use letters, digits, '-', '_' and '.' (at most 128, not starting with '.')", h.ID)
	}
	return filepath.Join(dir, FileName(h.Timestamp, h.ID)), nil
}

// SafeID reports whether a session id read from anywhere can be part of a
// file name: 1 to 128 of A–Z, a–z, 0–9, '-', '_' and '.', not starting with '.'.
func SafeID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Create starts a new session for cwd in dir. Nothing is written until the
// first user or assistant message (or Flush, or Immediate), as pi 1.6.0 does:
// setup entries alone (model, thinking level) leave no file behind.
func Create(cwd, dir string, opts ...Option) (*Session, error) {
	c := newConfig(opts)
	return create(dir, c, func(o ...session.Option) (*session.Log, error) {
		return session.New(cwd, append(withProject(cwd, c.header), o...)...), nil
	})
}

// withProject puts before opts the project of cwd (SPEC §2), so a session
// found again after its folder moved; an option of the caller's wins.
func withProject(cwd string, opts []session.Option) []session.Option {
	return append([]session.Option{session.WithProject(gitproject.Of(cwd))}, opts...)
}

// create makes a new session in dir: make builds its log with the options it
// is given, which include the log's store; the log's entries are written at
// the first write.
func create(dir string, c config, make func(...session.Option) (*session.Log, error)) (*Session, error) {
	st := &store{fs: c.fs, policy: c.policy, defer_: c.deferred}
	l, err := make(session.WithStore(st))
	if err != nil {
		return nil, err
	}
	path, err := sessionFile(dir, l.Header())
	if err != nil {
		return nil, err
	}
	st.path, st.header, st.pending = path, l.Header().Raw(), l.Entries()
	return &Session{Log: l, path: path, store: st}, nil
}

// Read loads a session file without taking the writer lock and without ever
// writing to it. Damage is reported in the log's Report. What is not a
// regular file is refused.
func Read(path string, opts ...Option) (*session.Log, error) {
	data, err := readRegular(path, newConfig(opts))
	if err != nil {
		return nil, err
	}
	return session.Load(data), nil
}

// readRegular reads the file at path, refusing what is not a regular file.
func readRegular(path string, c config) ([]byte, error) {
	if info, err := c.fs.Stat(path); err == nil {
		if err := sessionKind(path, info); err != nil {
			return nil, err
		}
	}
	return c.fs.ReadFile(path)
}

// ErrNotSession is returned when a file that has content holds no session line.
var ErrNotSession = errors.New("jsonl: not a session file")

// ReadSession is Read for a file that must be a session, as Open judges it:
// an empty or blank file is an empty session (as pi 1.6.0 opens it), and a
// file with content of which no line is a session header or entry is
// refused with ErrNotSession. Read itself returns whatever it finds, for fsck.
func ReadSession(path string, opts ...Option) (*session.Log, error) {
	data, err := readRegular(path, newConfig(opts))
	if err != nil {
		return nil, err
	}
	l := session.Load(data)
	if l.Report().NoHeader && l.Len() == 0 && len(bytes.TrimSpace(data)) > 0 {
		return nil, NotSessionError{Path: path}
	}
	return l, nil
}

// NotSessionError is ReadSession's refusal of a file with content of which
// no line is a session header or entry; it matches ErrNotSession.
type NotSessionError struct{ Path string }

func (e NotSessionError) Error() string {
	return e.Path + " is not a session file: no line of it is a session header or entry"
}

func (NotSessionError) Is(target error) bool { return target == ErrNotSession }

// Open opens a session file for writing: it takes the writer lock on the file
// and loads it. A missing file becomes a new session at that path. Damage is
// repaired only at the first append (or Repair), and never by deleting a byte
// (SPEC §8). A file with content of which no line is a session header or
// entry is refused (ErrNotSession) and left as it is. A file of a newer format
// version opens read-only: every append fails with an error that names the
// file and its version. What is not a regular file (a FIFO, a device, a
// folder) is refused before it is opened.
func Open(path string, opts ...Option) (*Session, error) {
	c := newConfig(opts)
	info, err := c.fs.Stat(path)
	if err == nil {
		if err := sessionKind(path, info); err != nil {
			return nil, err
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		st := &store{fs: c.fs, path: path, policy: c.policy, defer_: c.deferred}
		l := session.New(c.cwd, append(c.header, session.WithStore(st))...)
		st.header = l.Header().Raw()
		return &Session{Log: l, path: path, store: st}, nil
	}
	// Lock before reading, so no other arbor writer appends between the read and our first write.
	lock, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(path, c, lock)
	if err != nil {
		lock.release()
		return nil, err
	}
	return s, nil
}

func openLocked(path string, c config, lock *writerLock) (*Session, error) {
	f, err := c.fs.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s, err := load(path, c, lock, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func load(path string, c config, lock *writerLock, f File) (*Session, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !os.SameFile(st, lock.info) {
		return nil, fmt.Errorf("open %s: the file was replaced while it was being opened; try again", path)
	}
	data, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	st2 := &store{fs: c.fs, path: path, policy: c.policy, lock: lock, f: f, created: true}
	l := session.Load(data, append(c.header, session.WithCwd(c.cwd), session.WithStore(st2), session.WithSource(path))...)
	rep := l.Report()
	if rep.NoHeader && l.Len() == 0 && len(bytes.TrimSpace(data)) > 0 {
		return nil, fmt.Errorf("%w: no line of %s is a session header or entry; arbor left it unchanged ('arbor fsck %s' shows what it holds)", ErrNotSession, path, path)
	}
	size := int64(len(data))
	if rep.TornTail {
		// The last line is unfinished: it may be a write still in flight (loading
		// skipped it). The first append reads it again (store.readOthers), and a
		// rewrite carries it over.
		size = int64(bytes.LastIndexByte(data, '\n') + 1)
	}
	st2.size, st2.whole, st2.snapEnd = size, size, size
	s := &Session{Log: l, path: path, store: st2}
	switch {
	case l.ReadOnly() != nil:
		// A newer format: readable, never written, so no lock is needed either.
		lock.release()
		st2.lock = nil
		f.Close()
		st2.f = nil
		st2.header = l.Header().Raw()
		return s, nil
	case len(bytes.TrimSpace(data)) == 0:
		// Empty or blank: a new session at this path, written on first flush.
		f.Close()
		nl := session.New(c.cwd, append(c.header, session.WithStore(st2))...)
		s.Log = nl
		st2.f, st2.created, st2.defer_, st2.repair, st2.header = nil, false, c.deferred, repairBlankFile, nl.Header().Raw()
	case rep.NoHeader:
		// Entries without a header: keep them under a new one (made by Load
		// for this cwd, with an id derived from the file's first line).
		st2.repair, st2.backup, st2.snapshot = repairRewrite, BackupPath(path), l.Entries()
	case rep.Migrated:
		st2.repair, st2.backup, st2.snapshot = repairRewrite, VersionBackupPath(path, rep.Version), l.Entries()
		st2.header = session.MigratedHeader(l.Header())
	case rep.MissingNewline:
		st2.repair = repairTerminate
	}
	if st2.header == nil {
		st2.header = s.Log.Header().Raw()
	}
	return s, nil
}

// ContinueRecent opens the most recently modified session in dir whose first
// line is a session header (of any length), or creates a new one for cwd.
func ContinueRecent(cwd, dir string, opts ...Option) (*Session, error) {
	path, err := MostRecent(dir)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return Create(cwd, dir, opts...)
	}
	return Open(path, opts...)
}

// MostRecent returns the newest *.jsonl file in dir (by modification time) whose
// first line is a session header, or "" when there is none.
func MostRecent(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	type cand struct {
		path string
		mod  time.Time
	}
	var cs []cand
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if !HasHeader(p) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		cs = append(cs, cand{p, info.ModTime()})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].mod.After(cs[j].mod) })
	if len(cs) == 0 {
		return "", nil
	}
	return cs[0].path, nil
}

// HasHeader reports whether the file's first line is a session header, however long.
func HasHeader(path string) bool {
	line, err := FirstLine(path)
	if err != nil {
		return false
	}
	_, ok := session.ParseHeader(line)
	return ok
}

// sessionKind refuses what is not a regular file at a session's path (a
// symlink to one is one): opening a FIFO waits for a writer that never
// comes, and a device such as /dev/zero is read, or written, without end.
func sessionKind(path string, info fs.FileInfo) error {
	if info.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, not a session file (a session is a regular file)", path, Kind(info.Mode()))
}

// FirstLine reads a file's first line without reading the rest. It fails on
// what is not a regular file, without waiting on a FIFO.
func FirstLine(path string) ([]byte, error) {
	if noWait == 0 {
		if info, err := os.Stat(path); err == nil {
			if err := sessionKind(path, info); err != nil {
				return nil, err
			}
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noWait, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, err
	} else if err := sessionKind(path, info); err != nil {
		return nil, err
	}
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(out, buf[:i]...), nil
		}
		out = append(out, buf[:n]...)
		if err != nil {
			return out, nil
		}
	}
}

// ForkFrom copies every entry of the session at src into a new session for cwd
// in dir (pi's forkFrom), migrating an old file first. The new file is written at once.
// Unlike pi, the fork does not keep the source's name (Log.ForgetName): a name
// should find one session.
func ForkFrom(src, cwd, dir string, opts ...Option) (*Session, error) {
	old, err := Read(src, opts...)
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", src, err)
	}
	if old.Report().NoHeader {
		return nil, fmt.Errorf("fork %s: not a session file (its first line is not a session header)", src)
	}
	abs, _ := filepath.Abs(src)
	c := newConfig(opts)
	s, err := create(dir, c, func(o ...session.Option) (*session.Log, error) {
		return old.Copy(cwd, append(append(withProject(cwd, c.header), session.WithParent(abs)), o...)...), nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.Log.ForgetName(); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.Flush(); err != nil {
		return nil, err
	}
	return s, nil
}

// CreateBranchedSession writes a new session holding only the path root→leafID
// of this one, in the same folder, with parentSession pointing here (SPEC §6.1).
// Like pi 1.6.0, it writes the file at once when the path has a user or
// assistant message, and otherwise on the first one.
func (s *Session) CreateBranchedSession(leafID string, opts ...Option) (*Session, error) {
	return BranchFrom(s.path, s.Log, leafID, opts...)
}

// BranchFrom is CreateBranchedSession for a session read without the writer
// lock (Read): the source file is only read.
func BranchFrom(src string, l *session.Log, leafID string, opts ...Option) (*Session, error) {
	abs, _ := filepath.Abs(src)
	c := newConfig(opts)
	ns, err := create(filepath.Dir(src), c, func(o ...session.Option) (*session.Log, error) {
		return l.Branched(leafID, append(append(c.header, session.WithParent(abs)), o...)...)
	})
	if err != nil {
		return nil, err
	}
	if ns.HasConversation() {
		if err := ns.Flush(); err != nil {
			return nil, err
		}
	}
	return ns, nil
}
