//go:build unix

package blob

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPlantedLinks: a symlink planted at the store's folder, at a blob's
// folder or at a blob is never followed: nothing is written in another
// place, and a FIFO at a blob's name is not read (it would block).
func TestPlantedLinks(t *testing.T) {
	data := []byte("the full output\n")
	h := strings.TrimPrefix(Ref(data), Prefix)
	for _, tc := range []struct {
		name    string
		plant   func(dir, elsewhere, victim string) error
		putFail bool
	}{
		{"the store's folder", func(dir, elsewhere, _ string) error { return os.Symlink(elsewhere, dir) }, true},
		{"the blob's folder", func(dir, elsewhere, _ string) error {
			os.MkdirAll(dir, 0o700)
			return os.Symlink(elsewhere, filepath.Join(dir, h[:2]))
		}, true},
		{"the blob, to a file", func(dir, _, victim string) error {
			os.MkdirAll(filepath.Join(dir, h[:2]), 0o700)
			return os.Symlink(victim, filepath.Join(dir, h[:2], h))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir, elsewhere, victim := filepath.Join(root, "blobs"), filepath.Join(root, "elsewhere"), filepath.Join(root, "victim")
			os.Mkdir(elsewhere, 0o700)
			os.WriteFile(victim, []byte("precious"), 0o600)
			if err := tc.plant(dir, elsewhere, victim); err != nil {
				t.Fatal(err)
			}
			s := Store{Dir: dir}
			_, err := s.Put(data)
			if tc.putFail != (err != nil) {
				t.Errorf("Put = %v, want failure %v", err, tc.putFail)
			}
			if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
				t.Errorf("Put wrote through the link: %v", ents)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Errorf("the victim changed: %q", b)
			}
			if !tc.putFail {
				if got, err := s.Get(Ref(data)); err != nil || string(got) != string(data) {
					t.Errorf("Get after Put = %q, %v", got, err)
				}
			}
		})
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, h[:2]), 0o700)
	if err := syscall.Mkfifo(filepath.Join(dir, h[:2], h), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Store{Dir: dir}).Get(h[:8]); err == nil {
		t.Error("Get of a FIFO succeeded")
	}
}
