package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/arborlog/arbor/session/jsonl"
	"github.com/gofrs/flock"
)

// The archive is a small file, $ARBOR_DIR/archive.json, listing the sessions
// hidden from listings. It is kept apart from the index because the index is a
// cache that may be deleted; the archive is the user's decision.

type archiveFile struct {
	Sessions []archived `json:"sessions"`
}

type archived struct {
	Path       string `json:"path"`
	ID         string `json:"id"`
	ArchivedAt string `json:"archivedAt"`
}

func (c *Catalog) archivePath() string { return filepath.Join(c.home, "archive.json") }

// archived returns the archived sessions' absolute paths.
func (c *Catalog) archived() (map[string]bool, error) {
	a, err := c.readArchive()
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(a.Sessions))
	for _, s := range a.Sessions {
		m[s.Path] = true
	}
	return m, nil
}

func (c *Catalog) readArchive() (archiveFile, error) {
	var a archiveFile
	b, err := os.ReadFile(c.archivePath())
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return a, nil // no archive (or no usable home): nothing is archived
	}
	if err != nil {
		return a, fmt.Errorf("catalog: read %s: %w", c.archivePath(), err)
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("catalog: %s is damaged (%v); fix or remove it to unarchive every session", c.archivePath(), err)
	}
	return a, nil
}

// updateArchive changes the archive under a lock, so two processes archiving at
// once both count, and replaces the file atomically.
func (c *Catalog) updateArchive(f func(*archiveFile) error) error {
	if err := os.MkdirAll(c.home, 0o700); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	lk := flock.New(c.archivePath() + ".lock")
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("catalog: lock %s: %w", c.archivePath(), err)
	}
	defer lk.Unlock()
	a, err := c.readArchive()
	if err != nil {
		return err
	}
	if err := f(&a); err != nil {
		return err
	}
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	if err := jsonl.WriteFile(c.archivePath(), append(b, '\n')); err != nil {
		return fmt.Errorf("catalog: write %s: %w", c.archivePath(), err)
	}
	return nil
}

// Archive hides the session at path from listings without moving it.
func (c *Catalog) Archive(path string) error {
	abs, id, err := sessionID(path)
	if err != nil {
		return err
	}
	return c.updateArchive(func(a *archiveFile) error {
		for _, s := range a.Sessions {
			if s.Path == abs {
				return nil
			}
		}
		a.Sessions = append(a.Sessions, archived{Path: abs, ID: id, ArchivedAt: time.Now().UTC().Format(time.RFC3339)})
		return nil
	})
}

// Unarchive shows an archived session in listings again. It reports false when
// the session was not archived.
func (c *Catalog) Unarchive(path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	found := false
	err = c.updateArchive(func(a *archiveFile) error {
		kept := a.Sessions[:0]
		for _, s := range a.Sessions {
			if s.Path == abs {
				found = true
				continue
			}
			kept = append(kept, s)
		}
		a.Sessions = kept
		return nil
	})
	return found, err
}

// sessionID returns a session file's absolute path and header id.
func sessionID(path string) (string, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	f := file{path: path, abs: abs}
	st, err := summarize(f, nil)
	if err != nil {
		return "", "", fmt.Errorf("catalog: %w", err)
	}
	if st.sum.Phase != phaseSession {
		return "", "", fmt.Errorf("catalog: %s is not a session file (its first line is not a session header)", path)
	}
	return abs, st.sum.ID, nil
}
