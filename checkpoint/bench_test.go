package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree10k writes 10,000 small files in 100 folders.
func tree10k(b *testing.B) string {
	root := b.TempDir()
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", d))
		must(b, os.Mkdir(dir, 0o755))
		for f := range 100 {
			must(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), fmt.Appendf(nil, "package p%d\n// file %d\n", d, f), 0o644))
		}
	}
	return root
}

func BenchmarkSnapshotUnchanged10k(b *testing.B) {
	root := tree10k(b)
	s := newStore(b)
	m, err := s.Snapshot(root, Options{})
	must(b, err)
	for b.Loop() {
		if _, err := s.Snapshot(root, Options{Base: m.ID}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSnapshotOneChanged10k(b *testing.B) {
	root := tree10k(b)
	s := newStore(b)
	m, err := s.Snapshot(root, Options{})
	must(b, err)
	f := filepath.Join(root, "pkg050", "f050.go")
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		must(b, os.WriteFile(f, fmt.Appendf(nil, "package p\n// edit %d\n", i), 0o644))
		b.StartTimer()
		if _, err := s.Snapshot(root, Options{Base: m.ID}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStorage100Edits reports the store's size after 100 snapshots
// that each edit one line of a 100 KB text file: apparent bytes (the sum of
// object sizes) and disk bytes (blocks allocated).
func BenchmarkStorage100Edits(b *testing.B) {
	for b.Loop() {
		root := b.TempDir()
		s := newStore(b)
		var lines []string
		for i := 0; len(strings.Join(lines, "")) < 100<<10; i++ {
			lines = append(lines, fmt.Sprintf("line %d: the quick brown fox jumps over the lazy dog %d\n", i, i*7919))
		}
		var base Hash
		for turn := range 100 {
			lines[(turn*37)%len(lines)] = fmt.Sprintf("edited in turn %d\n", turn)
			must(b, os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Join(lines, "")), 0o644))
			m, err := s.Snapshot(root, Options{Base: base})
			must(b, err)
			base = m.ID
		}
		var apparent, disk int64
		must(b, filepath.WalkDir(s.Dir(), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			apparent += info.Size()
			disk += diskBytes(info)
			return nil
		}))
		b.ReportMetric(float64(apparent), "store-bytes")
		b.ReportMetric(float64(disk), "disk-bytes")
	}
}
