package catalog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkScanLines measures the line scanner alone, on sessions in memory.
func BenchmarkScanLines(b *testing.B) {
	dir, _ := benchDir(b)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var data []byte
	for _, f := range files[:min(200, len(files))] {
		d, _ := os.ReadFile(f)
		data = append(data, d...)
	}
	b.SetBytes(int64(len(data)))
	var l line
	for b.Loop() {
		d := data
		for len(d) > 0 {
			i := bytes.IndexByte(d, '\n')
			if !l.scan(d[:i]) {
				b.Fatal("bad line")
			}
			d = d[i+1:]
		}
	}
}
