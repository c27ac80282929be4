package jsonl

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// ErrLocked is returned when another process has the session open for writing.
var ErrLocked = errors.New("jsonl: session is open for writing in another process")

// LockError names the process that holds a session's writer lock.
type LockError struct {
	Path   string
	Holder Holder
}

// Holder is what a writer records in the lock file.
type Holder struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Started string `json:"started"`
}

func (e *LockError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("%s is open for writing in another process; close it there first", e.Path)
	}
	return fmt.Sprintf("%s is open for writing by pid %d on %s since %s; close it there first", e.Path, h.PID, h.Host, h.Started)
}

func (e *LockError) Unwrap() error { return ErrLocked }

// writerLock is the exclusive advisory lock on <file>.lock (SPEC §7). The kernel
// releases it when the process dies, so a crash never leaves a session locked.
type writerLock struct {
	fl *flock.Flock
}

func lockPath(path string) string { return path + ".lock" }

func acquire(path string) (*writerLock, error) {
	fl := flock.New(lockPath(path), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath(path), err)
	}
	if !ok {
		le := &LockError{Path: path}
		if b, err := os.ReadFile(lockPath(path)); err == nil {
			_ = json.Unmarshal(b, &le.Holder)
		}
		return nil, le
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Format(time.RFC3339)})
	// Record the holder for the next writer's error message. The lock is advisory,
	// so writing through a second descriptor is fine.
	_ = os.WriteFile(lockPath(path), append(b, '\n'), 0o600)
	return &writerLock{fl: fl}, nil
}

func (w *writerLock) release() error {
	if w == nil {
		return nil
	}
	return w.fl.Unlock()
}
