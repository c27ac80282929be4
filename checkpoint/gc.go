package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// GCStats is what a GC removed.
type GCStats struct {
	Objects int
	Bytes   int64
}

// GC removes every object that no snapshot in keep refers to (their
// manifests, file contents and chunks). It must not run while a snapshot of
// the same store is being taken: objects that snapshot has just written are
// not yet referred to.
func (s *Store) GC(keep []Hash) (GCStats, error) {
	live := map[Hash]bool{}
	for _, id := range keep {
		m, err := s.Load(id)
		if err != nil {
			return GCStats{}, err
		}
		live[id] = true
		for _, f := range m.Files {
			if !f.Mode.IsRegular() || live[f.Hash] {
				continue
			}
			live[f.Hash] = true
			kind, data, err := s.readObject(f.Hash)
			if err != nil {
				return GCStats{}, err
			}
			if kind == kindChunks {
				for i := 0; i+len(f.Hash) <= len(data); i += len(f.Hash) {
					var ch Hash
					copy(ch[:], data[i:])
					live[ch] = true
				}
			}
		}
	}
	var st GCStats
	objects := filepath.Join(s.dir, "objects")
	err := filepath.WalkDir(objects, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		h, herr := ParseHash(d.Name())
		if herr == nil && live[h] {
			return nil
		}
		if herr != nil && !strings.HasPrefix(d.Name(), ".tmp-") {
			return nil // not ours: left alone
		}
		info, ierr := d.Info()
		if err := os.Remove(p); err != nil {
			return err
		}
		st.Objects++
		if ierr == nil {
			st.Bytes += info.Size()
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("checkpoint: gc %s: %w", s.dir, err)
	}
	return st, nil
}
