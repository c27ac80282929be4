// Package blob keeps large tool outputs outside the session log, addressed by
// the SHA-256 of their bytes, so a log can stay small and lose nothing.
//
// A blob lives at <dir>/<first two hex digits>/<64 hex digits> and is written
// once, atomically (a temporary file renamed into place), mode 0600. Its
// reference is "sha256:<64 hex digits>"; Get accepts the reference, the bare
// digest, or a unique prefix of at least 8 hex digits.
package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/arborlog/arbor/session/jsonl"
)

// Prefix starts every reference.
const Prefix = "sha256:"

// ErrNotFound is returned for a reference that names no blob.
var ErrNotFound = errors.New("blob: not found")

// Store is a folder of blobs, usually $ARBOR_DIR/blobs.
type Store struct {
	Dir string
}

// Ref returns the reference of data.
func Ref(data []byte) string {
	sum := sha256.Sum256(data)
	return Prefix + hex.EncodeToString(sum[:])
}

func (s Store) path(hexsum string) string { return filepath.Join(s.Dir, hexsum[:2], hexsum) }

// Put stores data, if it is not already there, and returns its reference.
func (s Store) Put(data []byte) (string, error) {
	ref := Ref(data)
	hexsum := strings.TrimPrefix(ref, Prefix)
	path := s.path(hexsum)
	if info, err := os.Lstat(path); err == nil && info.Mode().IsRegular() {
		return ref, nil
	} // anything else at its name (a symlink) is replaced by the rename below, never followed
	// The store's folder and the blob's are arbor's own: a symlink planted
	// at either is refused, so no blob is written in another place.
	dir := filepath.Dir(path)
	for _, d := range []string{s.Dir, dir} {
		if err := jsonl.OwnDir(d); err != nil {
			return "", fmt.Errorf("blob: %w", err)
		}
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("blob: %w", err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("blob: write %s: %w", path, werr)
	}
	return ref, nil
}

// Get returns the blob a reference names, checking its digest.
func (s Store) Get(ref string) ([]byte, error) {
	hexsum, err := s.Resolve(ref)
	if err != nil {
		return nil, err
	}
	// Only a regular file is a blob: never read through a symlink or from a FIFO.
	f, err := jsonl.OpenRegular(s.path(hexsum))
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if Ref(data) != Prefix+hexsum {
		return nil, fmt.Errorf("blob: %s is damaged: its content no longer matches its digest", s.path(hexsum))
	}
	return data, nil
}

// Resolve turns a reference, digest or unique prefix into the full digest.
func (s Store) Resolve(ref string) (string, error) {
	h := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(ref), Prefix))
	if len(h) < 8 || strings.Trim(h, "0123456789abcdef") != "" || len(h) > 64 {
		return "", fmt.Errorf("blob: %q is not a blob reference (want sha256: and at least 8 hex digits)", ref)
	}
	if len(h) == 64 {
		if _, err := os.Stat(s.path(h)); err != nil {
			return "", fmt.Errorf("%w: %s in %s", ErrNotFound, ref, s.Dir)
		}
		return h, nil
	}
	names, err := os.ReadDir(filepath.Join(s.Dir, h[:2]))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("blob: %w", err)
	}
	var found []string
	for _, n := range names {
		if strings.HasPrefix(n.Name(), h) && len(n.Name()) == 64 {
			found = append(found, n.Name())
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: %s in %s", ErrNotFound, ref, s.Dir)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("blob: %s is ambiguous: %d blobs start with it; give more digits", ref, len(found))
}
