package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/arborlog/arbor/session"
)

// Durability says when appended entries are fsynced (SPEC §7).
type Durability int

const (
	// Turn fsyncs after every assistant message, every compaction and on close (the default).
	Turn Durability = iota
	// Always fsyncs after every entry.
	Always
	// Never leaves flushing to the operating system.
	Never
)

// ParseDurability reads "always", "turn" or "never".
func ParseDurability(s string) (Durability, error) {
	switch s {
	case "turn", "":
		return Turn, nil
	case "always":
		return Always, nil
	case "never":
		return Never, nil
	}
	return Turn, fmt.Errorf("unknown fsync policy %q: use always, turn or never", s)
}

func (d Durability) String() string {
	return [...]string{"turn", "always", "never"}[d]
}

// repair is what must happen to the file before the first append (SPEC §8).
type repair int

const (
	repairNone      repair = iota
	repairRewrite          // no header or an old version: keep a backup, rewrite atomically
	repairTornTail         // a partial last line: copy it to .torn, truncate
	repairNewline          // a complete last line without its newline
	repairBlankFile        // empty or only blank lines: write the header first
)

// store persists a Log's appends to one file. Its methods run with the Log's lock held.
type store struct {
	mu     sync.Mutex
	fs     FS
	path   string
	policy Durability
	lock   *writerLock

	f       File
	size    int64 // bytes of the file this store has accounted for (read or written)
	created bool  // the file exists with a header
	defer_  bool  // hold entries until the first assistant message
	header  []byte
	pending []*session.Entry

	repair   repair
	snapshot []*session.Entry // entries to write when the repair rewrites the file
	backup   string           // where the original goes before a rewrite
	corrupt  bool             // nothing parsed: move the file to <file>.corrupt before creating the new one
	repairs  []string         // what the repairs did, in order, for fsck and the caller
	buf      []byte           // reused line buffer: one write(2) per line
	closed   bool
}

var _ session.Store = (*store)(nil)

// Refresh returns entries another program appended since this store last looked.
func (s *store) Refresh() ([]*session.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("%s: session is closed", s.path)
	}
	if !s.created || s.repair != repairNone || s.f == nil {
		return nil, nil
	}
	st, err := s.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", s.path, err)
	}
	switch {
	case st.Size() == s.size:
		return nil, nil
	case st.Size() < s.size:
		return nil, fmt.Errorf("%s shrank from %d to %d bytes while open: another program rewrote it; reopen the session", s.path, s.size, st.Size())
	}
	buf := make([]byte, st.Size()-s.size)
	if _, err := s.f.ReadAt(buf, s.size); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", s.path, err)
	}
	end := bytes.LastIndexByte(buf, '\n') + 1
	if end < len(buf) {
		// The other program's last line lacks its newline: a complete line gets
		// one (and is indexed), a torn one goes to <file>.torn, before our append.
		if session.IsCompleteJSON(buf[end:]) {
			s.repair, end = repairNewline, len(buf)
		} else {
			s.repair = repairTornTail
		}
	}
	s.size += int64(end)
	return session.ParseEntries(buf[:end]), nil
}

// Write persists one entry.
func (s *store) Write(e *session.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%s: session is closed", s.path)
	}
	if !s.created {
		s.pending = append(s.pending, e)
		if s.defer_ && !hasAssistant(s.pending) {
			return nil
		}
		err := s.create()
		if err != nil {
			s.pending = s.pending[:len(s.pending)-1]
		}
		return err
	}
	if err := s.fix(); err != nil {
		return err
	}
	return s.appendLines([][]byte{e.Raw()}, s.policy == Always || (s.policy == Turn && turnEnds(e)))
}

func hasAssistant(es []*session.Entry) bool {
	for _, e := range es {
		if e.Type == session.TypeMessage && e.Role() == session.RoleAssistant {
			return true
		}
	}
	return false
}

// turnEnds reports whether the Turn policy syncs after e.
func turnEnds(e *session.Entry) bool {
	return (e.Type == session.TypeMessage && e.Role() == session.RoleAssistant) || e.Type == session.TypeCompaction
}

// appendLines writes each line with one write(2). On a failed or short write
// the file is cut back to its last complete line, so no later append is glued
// onto a fragment; on a failed sync the unacknowledged lines are cut too.
func (s *store) appendLines(lines [][]byte, sync bool) error {
	start := s.size
	for _, ln := range lines {
		buf := append(append(s.buf[:0], ln...), '\n')
		if cap(buf) <= 64<<10 {
			s.buf = buf
		}
		n, err := s.f.Write(buf)
		s.size += int64(n)
		if err == nil && n < len(buf) {
			err = io.ErrShortWrite
		}
		if err != nil {
			s.rollback(start)
			return fmt.Errorf("append to %s: %w (nothing after the last complete entry was kept; free space or fix the disk, then retry)", s.path, err)
		}
	}
	if sync {
		if err := s.f.Sync(); err != nil {
			s.rollback(start)
			return fmt.Errorf("fsync %s: %w (the entry was not kept)", s.path, err)
		}
	}
	return nil
}

func (s *store) rollback(to int64) {
	if err := s.f.Truncate(to); err != nil {
		// Leave the fragment for the next append's repair to move aside.
		s.repair = repairTornTail
	}
	s.size = to
}

// create writes a new file: the header and every entry held so far. A file
// that failed part-way stays open and cut back to where it started, so a retry
// writes everything once.
func (s *store) create() error {
	dir := filepath.Dir(s.path)
	if s.f == nil {
		if err := s.openNew(dir); err != nil {
			return err
		}
	}
	start := s.size
	header := s.header
	if start > 0 {
		// A file of blank lines: keep them, and start the header on a line of its own.
		var last [1]byte
		if _, err := s.f.ReadAt(last[:], start-1); err != nil {
			return fmt.Errorf("read %s: %w", s.path, err)
		}
		if last[0] != '\n' {
			header = append([]byte{'\n'}, header...)
		}
	}
	lines := [][]byte{header}
	for _, e := range s.pending {
		lines = append(lines, e.Raw())
	}
	if err := s.appendLines(lines, s.policy != Never); err != nil {
		return err
	}
	if s.policy != Never {
		if err := s.fs.SyncDir(dir); err != nil {
			s.rollback(start)
			return fmt.Errorf("fsync %s: %w (the new session was not kept)", dir, err)
		}
	}
	s.created, s.pending = true, nil
	return nil
}

// openNew takes the writer lock, moves an unreadable file aside and opens the
// session's file for appending, creating it.
func (s *store) openNew(dir string) error {
	if err := s.fs.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if s.lock == nil {
		l, err := acquire(s.path)
		if err != nil {
			return err
		}
		s.lock = l
	}
	flags := os.O_RDWR | os.O_APPEND | os.O_CREATE | os.O_EXCL
	switch {
	case s.corrupt:
		corrupt := freeName(s.fs, s.path+".corrupt")
		if err := s.fs.Rename(s.path, corrupt); err != nil {
			return fmt.Errorf("move unreadable %s aside to %s: %w", s.path, corrupt, err)
		}
		s.corrupt = false
		s.repairs = append(s.repairs, fmt.Sprintf("moved %s, where nothing parsed, to %s unchanged; started a new session there", s.path, corrupt))
	case s.repair == repairBlankFile:
		flags &^= os.O_EXCL
		s.repair = repairNone
		s.repairs = append(s.repairs, fmt.Sprintf("wrote a session header to %s, which was empty", s.path))
	}
	f, err := s.fs.OpenFile(s.path, flags, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: a file appeared there since the session was opened; open it instead", s.path)
		}
		return fmt.Errorf("create %s: %w", s.path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	s.f, s.size = f, st.Size()
	return nil
}

// fix repairs the file before the first append (SPEC §8), keeping every byte
// the user had in a sidecar file.
func (s *store) fix() error {
	switch s.repair {
	case repairNone:
		return nil
	case repairNewline:
		if err := s.appendLines([][]byte{nil}, false); err != nil {
			return err
		}
		s.repairs = append(s.repairs, fmt.Sprintf("added the newline missing at the end of %s", s.path))
	case repairTornTail:
		if err := s.moveTornTail(); err != nil {
			return err
		}
	case repairRewrite:
		if err := s.rewrite(); err != nil {
			return err
		}
	}
	s.repair = repairNone
	return nil
}

// moveTornTail copies the bytes after the last newline to <file>.torn (synced)
// and only then cuts them from the file.
func (s *store) moveTornTail() error {
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	if st.Size() <= s.size {
		return nil
	}
	frag := make([]byte, st.Size()-s.size)
	if _, err := s.f.ReadAt(frag, s.size); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	torn := freeName(s.fs, s.path+".torn")
	if err := writeAtomic(s.fs, torn, frag); err != nil {
		return fmt.Errorf("save the torn last line of %s to %s: %w (nothing was appended)", s.path, torn, err)
	}
	if err := s.f.Truncate(s.size); err != nil {
		return fmt.Errorf("truncate %s to its last complete line: %w (the fragment is saved in %s)", s.path, err, torn)
	}
	s.repairs = append(s.repairs, fmt.Sprintf("moved the torn last line of %s (%d bytes) to %s", s.path, len(frag), torn))
	return nil
}

// rewrite replaces the file with the header and the snapshot of entries,
// through a temporary file, after keeping the original as a backup.
func (s *store) rewrite() error {
	orig, err := s.fs.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	bak := freeName(s.fs, s.backup)
	if err := writeAtomic(s.fs, bak, orig); err != nil {
		return fmt.Errorf("back up %s to %s: %w (nothing was changed)", s.path, bak, err)
	}
	var b bytes.Buffer
	b.Write(s.header)
	b.WriteByte('\n')
	for _, e := range s.snapshot {
		b.Write(e.Raw())
		b.WriteByte('\n')
	}
	if err := replaceFile(s.fs, s.path, b.Bytes()); err != nil {
		return fmt.Errorf("%w (the original is kept in %s)", err, bak)
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	f, err := s.fs.OpenFile(s.path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("reopen %s: %w", s.path, err)
	}
	s.f, s.size, s.snapshot = f, int64(b.Len()), nil
	s.repairs = append(s.repairs, fmt.Sprintf("kept the original of %s as %s and rewrote it with a version %d header", s.path, bak, session.CurrentVersion))
	return nil
}

// freeName returns name, or name.1, name.2, … if it exists: a sidecar never overwrites another.
func freeName(fsys FS, name string) string {
	if _, err := fsys.Stat(name); errors.Is(err, fs.ErrNotExist) {
		return name
	}
	for i := 1; ; i++ {
		n := name + "." + strconv.Itoa(i)
		if _, err := fsys.Stat(n); errors.Is(err, fs.ErrNotExist) {
			return n
		}
	}
}

// createSynced creates name (which must not exist) with data and syncs it.
func createSynced(fsys FS, name string, data []byte) error {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeAtomic puts data at target through a temporary file in the same folder:
// write, fsync, rename over target, fsync the folder (SPEC §7). A crash leaves
// target either as it was or holding all of data, never a part of it; at worst
// a stray <target>.tmp remains. Sidecars (.torn, .bak) are written this way too,
// so a sidecar that exists always holds every byte it was meant to keep.
func writeAtomic(fsys FS, target string, data []byte) error {
	tmp := freeName(fsys, target+".tmp")
	if err := createSynced(fsys, tmp, data); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if err := fsys.Rename(tmp, target); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	return fsys.SyncDir(filepath.Dir(target))
}

// replaceFile atomically replaces path with data.
func replaceFile(fsys FS, path string, data []byte) error {
	if err := writeAtomic(fsys, path, data); err != nil {
		return fmt.Errorf("rewrite %s: %w", path, err)
	}
	return nil
}

func (s *store) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.created || s.closed {
		return nil
	}
	return s.create()
}

func (s *store) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.f != nil {
		if s.policy != Never {
			if err := s.f.Sync(); err != nil {
				errs = append(errs, fmt.Errorf("fsync %s: %w", s.path, err))
			}
		}
		if err := s.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", s.path, err))
		}
	}
	if err := s.lock.release(); err != nil {
		errs = append(errs, fmt.Errorf("unlock %s: %w", s.path, err))
	}
	return errors.Join(errs...)
}
