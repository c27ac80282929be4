package jsonl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osuser "os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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
	// SameProgram is true when a holder without a record is another process
	// running this very executable: an arbor that keeps its records under
	// another ARBOR_DIR. (This process's own locks always have records.)
	SameProgram bool
}

// Holder is what a writer records about itself under $ARBOR_DIR/locks.
type Holder struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	User    string `json:"user,omitempty"` // the operating system user
	Started string `json:"started"`
	// Program is the holder's program (its executable's name), never its
	// command line, which may hold a password (--store postgres://…) or a prompt.
	Program string `json:"program,omitempty"`
}

// UnmarshalJSON reads a record. Arbor once recorded its whole command line
// ("command"): of such a record only the program is kept.
func (h *Holder) UnmarshalJSON(b []byte) error {
	type record Holder
	var r struct {
		record
		Command string `json:"command"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	*h = Holder(r.record)
	if h.Program == "" {
		h.Program = ProgramOf(strings.Fields(r.Command))
	}
	return nil
}

// Program is this process's program, as a writer record names it.
func Program() string { return ProgramOf(os.Args) }

// ProgramOf names a program by its command line's first word, the
// executable's base name, without any argument.
func ProgramOf(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return filepath.Base(args[0])
}

// OSUser is the user this process runs as, as a writer record names it.
func OSUser() string {
	if u, err := osuser.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

func (e *LockError) Error() string {
	h := e.Holder
	switch {
	case h.PID == 0:
		return fmt.Sprintf("%s is locked for writing by another process that could not be identified; close it there first", e.Path)
	case !e.Arbor && e.SameProgram:
		return fmt.Sprintf("%s is open for writing by pid %d (%s), an arbor that keeps its writer records outside %s (another ARBOR_DIR); close it there first", e.Path, h.PID, describe(h), LockDir())
	case !e.Arbor:
		return fmt.Sprintf("%s is locked by pid %d (%s), which is not arbor; close it there first", e.Path, h.PID, describe(h))
	}
	return fmt.Sprintf("%s is open for writing by pid %d (%s); close it there first", e.Path, h.PID, describe(h))
}

func describe(h Holder) string {
	var parts []string
	if h.Program != "" {
		parts = append(parts, quoteCommand(h.Program))
	}
	if h.User != "" {
		parts = append(parts, "user "+quoteCommand(h.User))
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
// fails at once, naming the holder, when another process has it (within a
// second when the holder runs this program and its record is not found).
//
// The holder's record is written before the lock is tried, so whoever is
// refused finds it; a refused writer takes its own record back. A holder
// that lets go while it is being looked up is no holder: the lock is tried
// again. So is one that runs this program without a record here, until the
// deadline: it may have let go and locked again between the looks, its
// record made anew.
func lockFile(path string) (*writerLock, error) {
	var record, key string
	if info, err := os.Stat(path); err == nil {
		key = fileKey(info)
		record = writeRecord(key)
	}
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	deadline := time.Now().Add(time.Second)
	for {
		ok, err := fl.TryLock()
		if err != nil {
			removeRecord(record)
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			break
		}
		info, serr := fl.Stat()
		if serr != nil {
			info, serr = os.Stat(path)
		}
		if serr != nil {
			removeRecord(record)
			return nil, &LockError{Path: path}
		}
		h, arbor, held := findHolder(fileKey(info), record)
		same := !arbor && h.PID != 0 && h.PID != os.Getpid() && sameProgram(h.PID)
		if held && same && time.Now().Before(deadline) {
			// An arbor without a record here: one that let go and took the
			// lock again between the looks (its record is made before it
			// locks and removed after), or one with another ARBOR_DIR. Look
			// again until the deadline.
			continue
		}
		if held || time.Now().After(deadline) {
			removeRecord(record)
			return nil, &LockError{Path: path, Holder: h, Arbor: arbor, SameProgram: same}
		}
	}
	info, serr := fl.Stat()
	if serr != nil {
		removeRecord(record)
		fl.Unlock()
		return nil, fmt.Errorf("lock %s: %w", path, serr)
	}
	if k := fileKey(info); k != key {
		// The path named another file when it was looked at: record this one.
		removeRecord(record)
		record, key = writeRecord(k), k
	}
	removeStale(key)
	return &writerLock{fl: fl, info: info, record: record}, nil
}

func removeRecord(p string) {
	if p != "" {
		os.Remove(p)
	}
}

// release drops the lock and this holder's record.
func (w *writerLock) release() error {
	if w == nil {
		return nil
	}
	// Unlock first: a second writer refused in between still finds the record.
	err := w.fl.Unlock()
	removeRecord(w.record)
	return err
}

// LockDir is where writers record who they are: $ARBOR_DIR/locks. A record is
// named <file key>.<pid>.<n>.json, where the file key identifies the locked
// file (its device and inode), so any path to the file finds it, and n tells
// apart the locks one process tries.
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

var recordSeq atomic.Int64

// records lists the records for key: of pid, or of any process when pid is 0.
func records(key string, pid int) []string {
	who := "*"
	if pid != 0 {
		who = strconv.Itoa(pid)
	}
	ps, _ := filepath.Glob(filepath.Join(globEscape(LockDir()), globEscape(key)+"."+who+".*.json"))
	return ps
}

// writeRecord records this process as a writer of the file with key. It
// returns the record's path, or "" when it could not be written (a read-only
// $ARBOR_DIR): the lock still works, and a refused writer's error then says
// less about this one.
func writeRecord(key string) string {
	dir := LockDir()
	if err := OwnDir(dir); err != nil { // never a record through a planted symlink
		return ""
	}
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), Host: host, User: OSUser(), Started: time.Now().UTC().Format(time.RFC3339), Program: Program()}
	b, _ := json.Marshal(h)
	p := filepath.Join(dir, fmt.Sprintf("%s.%d.%d.json", key, h.PID, recordSeq.Add(1)))
	// Through a temporary file and a rename (a symlink planted at the record's
	// name is replaced, never followed), without fsync: a record only names a
	// live process, and a crash ends that process anyway.
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return ""
	}
	_, werr := f.Write(append(b, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		os.Remove(tmp)
		return ""
	}
	return p
}

// removeStale removes the records of processes that are gone (killed holders).
func removeStale(key string) {
	for _, p := range records(key, 0) {
		var pid int
		name := strings.TrimPrefix(filepath.Base(p), key+".")
		if _, err := fmt.Sscanf(name, "%d.", &pid); err == nil && pid > 0 && !alive(pid) {
			os.Remove(p)
		}
	}
}

// findHolder names the process that holds the lock on the file with key: its
// pid from the kernel's lock table where there is one (Linux), its details
// from its arbor record, else from the process table. held is false when no
// process holds it any more (the caller tries the lock again). A holder whose
// record is missing is looked at again for a moment (it may be an arbor that
// is re-recording itself) before it is called not arbor.
func findHolder(key, own string) (h Holder, arbor, held bool) {
	for wait := time.Millisecond; ; wait *= 2 {
		pid, listed := lockHolderPID(key)
		if !listed && lockTableReadable() {
			return Holder{}, false, false
		}
		if h, ok := readRecord(key, pid, own); ok {
			return h, true, true
		}
		if wait > 64*time.Millisecond {
			if pid == 0 {
				return Holder{}, false, true
			}
			return processHolder(pid), false, true
		}
		time.Sleep(wait)
	}
}

// readRecord reads the holder record for key: the one of pid when pid is
// known, else any record whose process is alive; never the record own.
func readRecord(key string, pid int, own string) (Holder, bool) {
	for _, p := range records(key, pid) {
		if p == own {
			continue
		}
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
