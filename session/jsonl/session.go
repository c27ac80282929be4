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
	header   []session.HeaderOption
}

// WithDurability sets when appends are fsynced (default Turn).
func WithDurability(d Durability) Option { return func(c *config) { c.policy = d } }

// WithFS replaces the file system (for fault-injection tests).
func WithFS(f FS) Option { return func(c *config) { c.fs = f } }

// Immediate writes a new session's file at its first append instead of waiting
// for the first assistant message.
func Immediate() Option { return func(c *config) { c.deferred = false } }

// WithCwd sets the working directory recorded for a session whose file has no
// usable header (default: the process's working directory).
func WithCwd(cwd string) Option { return func(c *config) { c.cwd = cwd } }

// WithHeader sets fields of a new session's header (session.WithID, session.WithParent).
func WithHeader(opts ...session.HeaderOption) Option {
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

// Close syncs and closes the file and releases the writer lock.
func (s *Session) Close() error { return s.store.close() }

// Flush writes a new session's file now, even before its first assistant message.
func (s *Session) Flush() error { return s.store.flush() }

// Repair applies now the repairs the first append would apply (SPEC §8): it
// moves a torn last line to <file>.torn, adds a missing final newline, rewrites
// a header-less or old-version file after backing it up, moves a file where
// nothing parses to <file>.corrupt and writes a new header, or writes a header
// to an empty file. It returns what it did, one sentence per repair.
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
	case st.created:
		err = st.fix()
	case st.corrupt || st.repair == repairBlankFile:
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

// FileName returns <ts>_<id>.jsonl for a header timestamp and session id.
func FileName(timestamp, id string) string {
	return strings.NewReplacer(":", "-", ".", "-").Replace(timestamp) + "_" + id + ".jsonl"
}

// Create starts a new session for cwd in dir. Nothing is written until the
// first assistant message (or Flush, or Immediate).
func Create(cwd, dir string, opts ...Option) (*Session, error) {
	c := newConfig(opts)
	l := session.New(cwd, c.header...)
	h := l.Header()
	return attach(l, filepath.Join(dir, FileName(h.Timestamp, h.ID)), c, nil), nil
}

func attach(l *session.Log, path string, c config, pending []*session.Entry) *Session {
	st := &store{fs: c.fs, path: path, policy: c.policy, defer_: c.deferred, header: l.Header().Raw(), pending: pending}
	l.SetStore(st)
	return &Session{Log: l, path: path, store: st}
}

// Read loads a session file without taking the writer lock and without ever
// writing to it. Damage is reported in the log's Report.
func Read(path string, opts ...Option) (*session.Log, error) {
	c := newConfig(opts)
	data, err := c.fs.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return session.Load(data), nil
}

// Open opens a session file for writing: it takes the writer lock and loads the
// file. A missing file becomes a new session at that path. Damage is repaired
// only at the first append (or Repair), and never by deleting a byte (SPEC §8).
// A file of a newer format version opens read-only: every append fails with an
// error that names the file and its version.
func Open(path string, opts ...Option) (*Session, error) {
	c := newConfig(opts)
	if _, err := c.fs.Stat(path); errors.Is(err, fs.ErrNotExist) {
		l := session.New(c.cwd, c.header...)
		return attach(l, path, c, nil), nil
	}
	// Lock before reading, so no other writer appends between the read and our first write.
	lock, err := acquire(path)
	if err != nil {
		return nil, err
	}
	data, err := c.fs.ReadFile(path)
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	l := session.Load(data)
	rep := l.Report()
	st := &store{fs: c.fs, path: path, policy: c.policy, lock: lock, size: int64(len(data)), created: true}
	s := &Session{Log: l, path: path, store: st}
	switch {
	case l.ReadOnly() != nil:
		// A newer format: readable, never written, so no lock is needed either.
		l.SetReadOnly(fmt.Errorf("%s: %w", path, l.ReadOnly()))
		lock.release()
		st.lock = nil
		st.header = l.Header().Raw()
		l.SetStore(st)
		return s, nil
	case len(bytes.TrimSpace(data)) == 0:
		// Empty or blank: a new session at this path, written on first flush.
		nl := session.New(c.cwd, c.header...)
		s.Log = nl
		st.created, st.defer_, st.repair, st.header = false, c.deferred, repairBlankFile, nl.Header().Raw()
	case rep.NoHeader && l.Len() == 0:
		// Nothing parses: keep the file as <file>.corrupt and start fresh.
		nl := session.New(c.cwd, c.header...)
		s.Log = nl
		st.created, st.defer_, st.corrupt, st.header = false, c.deferred, true, nl.Header().Raw()
	case rep.NoHeader:
		// Entries without a header: keep them under a new one (new id, this cwd).
		h := l.Header()
		l.SetHeader(session.Header{Version: session.CurrentVersion, ID: h.ID, Timestamp: h.Timestamp, Cwd: c.cwd})
		st.repair, st.backup, st.snapshot = repairRewrite, path+".bak", l.Entries()
	case rep.Migrated:
		st.repair, st.backup, st.snapshot = repairRewrite, fmt.Sprintf("%s.v%d.bak", path, rep.Version), l.Entries()
		st.header = session.MigratedHeader(l.Header())
	case rep.TornTail:
		st.repair = repairTornTail
		st.size = int64(bytes.LastIndexByte(data, '\n') + 1)
	case rep.MissingNewline:
		st.repair = repairNewline
	}
	if st.header == nil {
		st.header = s.Log.Header().Raw()
	}
	if st.created {
		f, err := c.fs.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			lock.release()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		st.f = f
	}
	s.Log.SetStore(st)
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

// FirstLine reads a file's first line without reading the rest.
func FirstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
	l := old.Copy(cwd, append(c.header, session.WithParent(abs))...)
	h := l.Header()
	s := attach(l, filepath.Join(dir, FileName(h.Timestamp, h.ID)), c, l.Entries())
	if err := s.Flush(); err != nil {
		return nil, err
	}
	return s, nil
}

// CreateBranchedSession writes a new session holding only the path root→leafID
// of this one, in the same folder, with parentSession pointing here (SPEC §6.1).
// Like pi, it writes the file at once when the path has an assistant message,
// and otherwise on the first one.
func (s *Session) CreateBranchedSession(leafID string, opts ...Option) (*Session, error) {
	abs, _ := filepath.Abs(s.path)
	c := newConfig(opts)
	l, err := s.Log.Branched(leafID, append(c.header, session.WithParent(abs))...)
	if err != nil {
		return nil, err
	}
	h := l.Header()
	ns := attach(l, filepath.Join(filepath.Dir(s.path), FileName(h.Timestamp, h.ID)), c, l.Entries())
	if l.HasAssistant() {
		if err := ns.Flush(); err != nil {
			return nil, err
		}
	}
	return ns, nil
}
