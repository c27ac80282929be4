package jsonl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/session"
)

// benchText is a message body of about 1 KB, the size of a typical turn.
var benchText = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 22)

// benchFile writes a session of n messages: a main path of pathLen entries and,
// branching off its first entry, a side branch holding the rest. The leaf is
// the end of the main path (arbor's persisted leaf).
func benchFile(b *testing.B, n, pathLen int) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "s.jsonl")
	s, err := Open(path, WithDurability(Never), Immediate())
	if err != nil {
		b.Fatal(err)
	}
	msg := func(i int) session.Message {
		if i%2 == 0 {
			return user(b, fmt.Sprintf("%d %s", i, benchText))
		}
		return assistant(b, fmt.Sprintf("%d %s", i, benchText))
	}
	first, err := s.AppendMessage(msg(0))
	if err != nil {
		b.Fatal(err)
	}
	for i := 1; i < n-pathLen+1; i++ { // the side branch
		if _, err := s.AppendMessage(msg(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.BranchTo(first.ID); err != nil {
		b.Fatal(err)
	}
	for i := 1; i < pathLen; i++ {
		if _, err := s.AppendMessage(msg(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

// BenchmarkRead loads files of growing size: MB/s stays flat when opening
// grows linearly with the file.
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		path, size := benchFile(b, n, 100)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.SetBytes(size)
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := Read(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpen is Read plus the writer lock and the file handle.
func BenchmarkOpen(b *testing.B) {
	path, size := benchFile(b, 4000, 100)
	b.SetBytes(size)
	for b.Loop() {
		s, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkReadBig loads the 107 MB session pi's `big OUT 100` writes, when it
// has been made (see /tmp/arbor-bench-store.md).
func BenchmarkReadBig(b *testing.B) {
	path := os.Getenv("ARBOR_BIG")
	if path == "" {
		path = "/tmp/arbor-bench/big100.jsonl"
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Skip("no big session: node pi.mjs big /tmp/arbor-bench/big100.jsonl 100")
	}
	b.SetBytes(st.Size())
	defer reportCPU(b)()
	for b.Loop() {
		l, err := Read(path)
		if err != nil {
			b.Fatal(err)
		}
		_ = l.Context()
	}
}

// BenchmarkContext builds the context on a path of fixed length in files of
// growing size (time should stay flat), then on paths of growing length in a
// file of fixed size (time should grow with the path).
func BenchmarkContext(b *testing.B) {
	for _, c := range []struct{ n, path int }{
		{1000, 100}, {4000, 100}, {16000, 100},
		{4000, 400}, {4000, 1600},
	} {
		path, _ := benchFile(b, c.n, c.path)
		l, err := Read(path)
		if err != nil {
			b.Fatal(err)
		}
		if got := len(l.Context().Messages); got != c.path {
			b.Fatalf("context has %d messages, want %d", got, c.path)
		}
		b.Run(fmt.Sprintf("entries=%d/path=%d", c.n, c.path), func(b *testing.B) {
			defer reportCPU(b)()
			for b.Loop() {
				_ = l.Context()
			}
		})
	}
}

// BenchmarkAppend appends 1 KB messages under each durability policy.
// BenchmarkBareAppend is the floor to compare Always with.
func BenchmarkAppend(b *testing.B) {
	for _, p := range []Durability{Never, Turn, Always} {
		b.Run(p.String(), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "s.jsonl"), WithDurability(p), Immediate())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			m := user(b, benchText)
			e, err := s.AppendMessage(m)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(e.Raw()) + 1))
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := s.AppendMessage(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBareAppend writes the same lines with one write(2) and, for
// "fsync", one fsync each, on an O_APPEND file: no JSON, no index, no lock.
func BenchmarkBareAppend(b *testing.B) {
	for _, sync := range []bool{false, true} {
		name := "nosync"
		if sync {
			name = "fsync"
		}
		b.Run(name, func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "s.jsonl"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			l := session.New("/bench")
			e, err := l.AppendMessage(user(b, benchText))
			if err != nil {
				b.Fatal(err)
			}
			line := append(append([]byte(nil), e.Raw()...), '\n')
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := f.Write(line); err != nil {
					b.Fatal(err)
				}
				if sync {
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkAlwaysVsBare alternates an Always append with a bare write+fsync
// of a line of the same size, so both see the same disk at the same moment,
// and reports each one's mean time and their ratio.
func BenchmarkAlwaysVsBare(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(filepath.Join(dir, "s.jsonl"), WithDurability(Always), Immediate())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	f, err := os.OpenFile(filepath.Join(dir, "bare.jsonl"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m := user(b, benchText)
	e, err := s.AppendMessage(m)
	if err != nil {
		b.Fatal(err)
	}
	line := append(append([]byte(nil), e.Raw()...), '\n')
	var store, bare time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := s.AppendMessage(m); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		store, bare = store+t1.Sub(t0), bare+time.Since(t1)
	}
	b.ReportMetric(float64(store.Nanoseconds())/float64(b.N), "store-ns/op")
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "bare-ns/op")
	b.ReportMetric(float64(store)/float64(bare), "ratio")
}

// reportCPU reports the process's CPU time (every thread, user and system) per
// operation: on a shared machine wall time measures the neighbours as much as
// the code. Call as defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
