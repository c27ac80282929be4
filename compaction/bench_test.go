package compaction

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/session"
)

// BenchmarkPrepare plans the compaction of a 1 MB pi-written session (pi's
// prepareCompaction on the same branch: see /tmp/arbor-bench-compaction.md).
func BenchmarkPrepare(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "pi", "sessions", "big-1mb.jsonl"))
	if err != nil {
		b.Skip(err)
	}
	path := session.Load(data).PathTo("")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Prepare(path, DefaultSettings); err != nil {
			b.Fatal(err)
		}
	}
}
