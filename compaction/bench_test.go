package compaction

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/internal/sessiongen"
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

// BenchmarkPrepareChain plans the compaction of a chain of 100,000 entries
// (internal/sessiongen's plain shapes: no usage, so every message is
// estimated), as 'arbor compact --dry-run' does; BENCHMARKS.md has the
// 1,000,000-entry command.
func BenchmarkPrepareChain(b *testing.B) {
	var buf bytes.Buffer
	if err := sessiongen.Plain(&buf, 100000); err != nil {
		b.Fatal(err)
	}
	path := session.Load(buf.Bytes()).PathTo("")
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Prepare(path, DefaultSettings); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactChain plans and writes the mechanical summary of a chain of
// 100,000 entries of pi's shapes (internal/sessiongen.Chain: thinking, tool
// calls, tool results, usage), as 'arbor compact' does before it appends.
func BenchmarkCompactChain(b *testing.B) {
	var buf bytes.Buffer
	if err := sessiongen.Chain(&buf, 100000, 24); err != nil {
		b.Fatal(err)
	}
	path := session.Load(buf.Bytes()).PathTo("")
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		p, err := Prepare(path, DefaultSettings)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Summarize(context.Background(), p, Mechanical{}, "", DefaultSettings.ReserveTokens); err != nil {
			b.Fatal(err)
		}
	}
}
