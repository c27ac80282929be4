package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// Rehomed is what Rehome did, or would do, with one session.
type Rehomed struct {
	ID     string `json:"id"`
	From   string `json:"from"`
	To     string `json:"to"`
	Status string `json:"status"` // RehomeMoved, RehomeWouldMove, RehomeLocked, RehomeConflict, RehomeChanged
	Trash  string `json:"trash,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Rehome statuses.
const (
	RehomeMoved     = "moved"      // copied to the new folder; the old file is in the trash
	RehomeWouldMove = "would move" // a dry run
	RehomeLocked    = "locked"     // open for writing elsewhere: not touched
	RehomeConflict  = "conflict"   // another file is at the destination: neither touched
	RehomeChanged   = "changed"    // written to while being copied (a writer without the lock): not moved
)

// ErrSameFolder is returned when Rehome is given one folder twice.
var ErrSameFolder = errors.New("catalog: the old and new folders are the same")

// Rehome re-homes the sessions made in the folder from, which moved to to:
// in arbor's and pi's session folders, each session whose header cwd is from
// is copied to to's folder with the cwd updated, and the old file (with its
// sidecars) goes to the trash. Each is done under its writer lock: one open
// for writing is left as it is (RehomeLocked) unless it is let go within
// wait. A destination that exists is never replaced: holding the copy's bytes,
// it is a finished copy whose trashing was interrupted; else RehomeConflict.
// Run again, it finds nothing left to move: it is idempotent.
func (c *Catalog) Rehome(from, to string, dryRun bool, wait time.Duration) ([]Rehomed, error) {
	from, to = filepath.Clean(from), filepath.Clean(to)
	if !filepath.IsAbs(from) || !filepath.IsAbs(to) {
		return nil, fmt.Errorf("catalog: rehome %s to %s: the folders must be absolute", from, to)
	}
	if from == to {
		return nil, fmt.Errorf("%w: %s", ErrSameFolder, from)
	}
	var out []Rehomed
	for _, root := range []string{filepath.Join(c.home, "sessions"), PiSessionsRoot()} {
		if root == "" {
			continue
		}
		oldDir, newDir := jsonl.Dir(root, from), jsonl.Dir(root, to)
		ents, err := os.ReadDir(oldDir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("catalog: %w", err)
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, name := range names {
			r, ok, err := c.rehome(filepath.Join(oldDir, name), filepath.Join(newDir, name), from, to, dryRun, wait)
			if err != nil {
				return out, err
			}
			if ok {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// rehome moves one file; ok is false when it is not a session of from (the
// folder's name is shared by other paths: /a/b-c and /a-b/c).
func (c *Catalog) rehome(src, dst, from, to string, dryRun bool, wait time.Duration) (Rehomed, bool, error) {
	h, ok := readHeader(src)
	if !ok || filepath.Clean(h.Cwd) != from || h.Cwd == "" {
		return Rehomed{}, false, nil
	}
	r := Rehomed{ID: h.ID, From: src, To: dst}
	if dryRun {
		r.Status = RehomeWouldMove
		if _, err := os.Lstat(dst); err == nil {
			r.Status, r.Reason = RehomeConflict, "a file is at the destination"
		}
		return r, true, nil
	}
	lk, err := lockWaiting(src, wait)
	var le *jsonl.LockError
	if errors.As(err, &le) {
		r.Status, r.Reason = RehomeLocked, le.Error()
		return r, true, nil
	}
	if err != nil {
		return r, true, err
	}
	defer lk.Unlock()
	before, data, err := readStable(src)
	if err != nil {
		return r, true, fmt.Errorf("catalog: %w", err)
	}
	h, ok = readHeader(src) // as it is now, under the lock
	if !ok || filepath.Clean(h.Cwd) != from {
		return Rehomed{}, false, nil
	}
	first := bytes.IndexByte(data, '\n')
	if first < 0 {
		first = len(data)
	}
	copyData := append(append(session.HeaderWithCwd(h, to), '\n'), data[min(first+1, len(data)):]...)
	if first == len(data) {
		copyData = copyData[:len(copyData)-1] // a header without its newline stays so
	}
	made := false
	if err := jsonl.OwnDir(filepath.Dir(dst)); err != nil {
		return r, true, fmt.Errorf("catalog: %w", err)
	}
	switch err := jsonl.CreateFile(dst, copyData); {
	case errors.Is(err, fs.ErrExist):
		have, rerr := os.ReadFile(dst)
		if rerr != nil || !bytes.Equal(have, copyData) {
			r.Status, r.Reason = RehomeConflict, "another file is at the destination"
			return r, true, nil
		}
	case err != nil:
		return r, true, fmt.Errorf("catalog: %w", err)
	default:
		made = true
	}
	if now, err := os.Stat(src); err != nil || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
		// A writer that takes no lock (pi) appended meanwhile: the copy
		// lacks it. Take back only the copy just made; the source is whole.
		if made {
			_ = os.Remove(dst)
		}
		r.Status, r.Reason = RehomeChanged, "written to while being copied; run again once it is closed"
		return r, true, nil
	}
	st, err := summarize(file{path: src, abs: src}, nil)
	if err != nil {
		return r, true, fmt.Errorf("catalog: %w", err)
	}
	t, err := c.removeLocked(src, st.sum)
	if err != nil {
		return r, true, err
	}
	r.Status, r.Trash = RehomeMoved, t.dir
	return r, true, nil
}

// lockWaiting takes path's writer lock, trying again until wait has passed.
func lockWaiting(path string, wait time.Duration) (*jsonl.Lock, error) {
	deadline := time.Now().Add(wait)
	for {
		lk, err := jsonl.LockFile(path)
		if err == nil || !errors.Is(err, jsonl.ErrLocked) || time.Now().After(deadline) {
			return lk, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readStable reads a regular file whole, with its stat from before the read.
func readStable(path string) (fs.FileInfo, []byte, error) {
	f, err := jsonl.OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	return info, data, err
}

// readHeader reads the first line of a regular file as a session header.
func readHeader(path string) (session.Header, bool) {
	f, err := jsonl.OpenRegular(path)
	if err != nil {
		return session.Header{}, false
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, buf)
	line := buf[:n]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	return session.ParseHeader(line)
}
