package export

import (
	"io"
	"os"
	"testing"

	"github.com/arborlog/arbor/session/jsonl"
)

// bigSession is the 100 MB session pi writes (node pi.mjs big FILE 100, from
// the pi 1.6.0 peer); ARBOR_BIG_SESSION names it. Benchmarks skip without it.
func bigSession(b testing.TB) string {
	p := os.Getenv("ARBOR_BIG_SESSION")
	if p == "" {
		b.Skip("set ARBOR_BIG_SESSION to a large session (node pi.mjs big FILE 100)")
	}
	return p
}

// BenchmarkExportHTMLBig reads the session and writes its page, as
// 'arbor export' does.
func BenchmarkExportHTMLBig(b *testing.B) {
	path := bigSession(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		l, err := jsonl.Read(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := HTML(io.Discard, l, Options{Source: path}); err != nil {
			b.Fatal(err)
		}
	}
}
