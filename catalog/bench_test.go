package catalog

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// benchDir is a folder of many sessions for the listing and search benchmarks:
// $ARBOR_BENCH_DIR, or what `node pi.mjs many /tmp/arbor-bench/many2000 2000 100` writes.
func benchDir(b *testing.B) (string, int64) {
	dir := os.Getenv("ARBOR_BENCH_DIR")
	if dir == "" {
		dir = "/tmp/arbor-bench/many2000"
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		b.Skipf("no sessions in %s (set ARBOR_BENCH_DIR)", dir)
	}
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			n += st.Size()
		}
	}
	return dir, n
}

// BenchmarkListCold lists a folder with no index yet (the index is built).
func BenchmarkListCold(b *testing.B) {
	dir, size := benchDir(b)
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		home := b.TempDir()
		b.StartTimer()
		listOnce(b, home, dir)
	}
}

// listOnce opens the catalog in home, lists dir and closes it.
func listOnce(b *testing.B, home, dir string) {
	c := Open(home)
	if _, err := c.List(Scope{Dir: dir}, ListOptions{}); err != nil {
		b.Fatal(err)
	}
	c.Close()
}

// BenchmarkListWarm lists a folder whose index is up to date.
func BenchmarkListWarm(b *testing.B) {
	dir, _ := benchDir(b)
	home := b.TempDir()
	listOnce(b, home, dir)
	for b.Loop() {
		listOnce(b, home, dir)
	}
}

// BenchmarkScan is the cold path without SQLite: reading every file's summary.
func BenchmarkScan(b *testing.B) {
	dir, size := benchDir(b)
	files, _, err := Scope{Dir: dir}.walk()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, err := summarizeAll(files, make([]*state, len(files)), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexText builds the full-text index of a folder (summaries included).
func BenchmarkIndexText(b *testing.B) {
	dir, size := benchDir(b)
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		home := b.TempDir()
		b.StartTimer()
		c := Open(home)
		if _, err := c.Update(Scope{Dir: dir}, false); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkSearchRare searches an indexed folder for a word in few entries.
func BenchmarkSearchRare(b *testing.B) {
	dir, _ := benchDir(b)
	home := b.TempDir()
	c := Open(home)
	if _, err := c.Update(Scope{Dir: dir}, false); err != nil {
		b.Fatal(err)
	}
	c.Close()
	q, _ := ParseQuery("named session 1234")
	for b.Loop() {
		c := Open(home)
		if _, err := c.Search(Scope{Dir: dir}, q, SearchOptions{Limit: 50}); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// typedWords are words of the benchmark corpus's text, typed a key at a time
// by BenchmarkSearchKeystroke.
var typedWords = []string{"dereference", "loader", "newline", "entries", "session", "greeting"}

// BenchmarkSearchKeystroke is search as you type on an open catalog, as the
// picker runs it: every prefix of a few words ("d", "de", ... "dereference"),
// each a search for the best 50 hits. It reports the 50th and 95th
// percentiles of one keystroke's search.
func BenchmarkSearchKeystroke(b *testing.B) {
	dir, _ := benchDir(b)
	home := b.TempDir()
	c := Open(home)
	defer c.Close()
	if _, err := c.Update(Scope{Dir: dir}, false); err != nil {
		b.Fatal(err)
	}
	var qs []Query
	for _, w := range typedWords {
		for n := 1; n <= len(w); n++ {
			q, err := ParseQuery(w[:n])
			if err != nil {
				b.Fatal(err)
			}
			qs = append(qs, q)
		}
	}
	var took []time.Duration
	// CPU time too: on a loaded machine the wall clock mostly measures the wait for a core.
	cpu0 := cpuTime()
	for b.Loop() {
		for _, q := range qs {
			start := time.Now()
			if _, err := c.Search(Scope{Dir: dir}, q, SearchOptions{Limit: 50}); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(took)), "cpu-ms/query")
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(0, "ns/op")
}
