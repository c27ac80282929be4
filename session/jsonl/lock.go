package jsonl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// ErrLocked is returned when another process has the session open for writing.
var ErrLocked = errors.New("jsonl: session is open for writing in another process")

// LockError names the process that holds a session's writer lock.
type LockError struct {
	Path   string
	Holder Holder
	// Arbor is false when the holder left no arbor holder record: another
	// program locked the file (or an arbor that could not write its record).
	Arbor bool
}

// Holder is what a writer records about itself under $ARBOR_DIR/locks.
type Holder struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Started string `json:"started"`
	Command string `json:"command,omitempty"`
}

func (e *LockError) Error() string {
	h := e.Holder
	switch {
	case h.PID == 0:
		return fmt.Sprintf("%s is locked for writing by another process that could not be identified; close it there first", e.Path)
	case !e.Arbor:
		return fmt.Sprintf("%s is locked by pid %d (%s), which is not arbor; close it there first", e.Path, h.PID, describe(h))
	}
	return fmt.Sprintf("%s is open for writing by pid %d (%s); close it there first", e.Path, h.PID, describe(h))
}

func describe(h Holder) string {
	var parts []string
	if h.Command != "" {
		parts = append(parts, quoteCommand(h.Command))
	}
	if h.Host != "" {
		parts = append(parts, "on "+h.Host)
	}
	if h.Started != "" {
		parts = append(parts, "since "+h.Started)
	}
	if len(parts) == 0 {
		return "no details"
	}
	return strings.Join(parts, " ")
}

// quoteCommand shows a command line on one line, its control characters escaped.
func quoteCommand(s string) string {
	const max = 120
	if len(s) > max {
		s = s[:max] + "…"
	}
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}

func (e *LockError) Unwrap() error { return ErrLocked }

// writerLock is an exclusive advisory lock on the session file itself (SPEC
// §7): it belongs to the file, not to the path, so a symlink, a hard link or
// any other path to the same file meets the same lock, and nothing is created
// beside the session. The kernel releases it when the process dies.
type writerLock struct {
	fl     *flock.Flock
	info   fs.FileInfo // the locked file
	record string      // this holder's record under $ARBOR_DIR/locks, or ""
}

// lockFile takes the writer lock on the file at path, which must exist. It
// fails at once, naming the holder, when another process has it.
func lockFile(path string) (*writerLock, error) {
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	info, serr := fl.Stat()
	if !ok {
		if serr != nil {
			info, serr = os.Stat(path)
		}
		le := &LockError{Path: path}
		if serr == nil {
			le.Holder, le.Arbor = findHolder(fileKey(info))
		}
		return nil, le
	}
	if serr != nil {
		fl.Unlock()
		return nil, fmt.Errorf("lock %s: %w", path, serr)
	}
	w := &writerLock{fl: fl, info: info}
	w.record = writeRecord(fileKey(info))
	return w, nil
}

// release drops the lock and this holder's record.
func (w *writerLock) release() error {
	if w == nil {
		return nil
	}
	// Unlock first: a second writer refused in between still finds the record.
	err := w.fl.Unlock()
	if w.record != "" {
		os.Remove(w.record)
	}
	return err
}

// LockDir is where writers record who they are: $ARBOR_DIR/locks. A record is
// named <file key>.<pid>.json, where the file key identifies the locked file
// (its device and inode), so any path to the file finds it.
func LockDir() string { return filepath.Join(Home(), "locks") }

// Home returns $ARBOR_DIR, or ~/.arbor: arbor's own folder (sessions, the
// index, the trash, the writer records).
func Home() string {
	if d := os.Getenv("ARBOR_DIR"); d != "" {
		return d
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return ".arbor"
	}
	return filepath.Join(h, ".arbor")
}

func recordPath(key string, pid int) string {
	return filepath.Join(LockDir(), fmt.Sprintf("%s.%d.json", key, pid))
}

// writeRecord records this process as the holder of the file with key and
// removes records other processes left for it (they no longer hold the lock,
// since this process does). It returns the record's path, or "" when it could
// not be written (a read-only $ARBOR_DIR): the lock still holds, and a second
// writer's error then says less about this one.
func writeRecord(key string) string {
	dir := LockDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	if stale, _ := filepath.Glob(filepath.Join(globEscape(dir), globEscape(key)+".*.json")); len(stale) > 0 {
		for _, s := range stale {
			os.Remove(s)
		}
	}
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Format(time.RFC3339), Command: commandLine()}
	b, _ := json.Marshal(h)
	p := recordPath(key, h.PID)
	// Through a temporary file and a rename: a symlink planted at the record's
	// name is replaced, never followed.
	if err := writeAtomic(OS, p, append(b, '\n')); err != nil {
		return ""
	}
	return p
}

// findHolder names the process that holds the lock on the file with key: its
// pid from the kernel's lock table where there is one (Linux), its details
// from its arbor record, else from the process table. The holder may be
// between taking the lock and writing its record, so a missing record is
// looked for again for a moment before the holder is called not arbor.
func findHolder(key string) (Holder, bool) {
	pid := lockHolderPID(key)
	for wait := time.Millisecond; ; wait *= 2 {
		if h, ok := readRecord(key, pid); ok {
			return h, true
		}
		if wait > 128*time.Millisecond {
			break
		}
		time.Sleep(wait)
		if pid == 0 {
			pid = lockHolderPID(key)
		}
	}
	if pid == 0 {
		return Holder{}, false
	}
	return processHolder(pid), false
}

// readRecord reads the holder record for key: the one of pid when pid is
// known, else any record whose process is alive.
func readRecord(key string, pid int) (Holder, bool) {
	var paths []string
	if pid != 0 {
		paths = []string{recordPath(key, pid)}
	} else {
		paths, _ = filepath.Glob(filepath.Join(globEscape(LockDir()), globEscape(key)+".*.json"))
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var h Holder
		if json.Unmarshal(b, &h) != nil || h.PID == 0 || (pid != 0 && h.PID != pid) || !alive(h.PID) {
			continue
		}
		return h, true
	}
	return Holder{}, false
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`).Replace(s)
}

// Lock is the writer lock of a session file taken by an operation that moves
// or deletes the file (the catalog's trash), so that no writer has it open
// meanwhile. It is the same lock Open takes.
type Lock struct{ w *writerLock }

// LockFile takes the writer lock on the session file at path; it fails at
// once, naming the holder (a *LockError), when a writer has it.
func LockFile(path string) (*Lock, error) {
	w, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	return &Lock{w}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error { return l.w.release() }
