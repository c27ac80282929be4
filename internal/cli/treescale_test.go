package cli

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/arborlog/arbor/internal/sessiongen"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session"
)

// drawTree draws l as 'arbor tree' does (default filter) at width columns.
func drawTree(w io.Writer, l *session.Log, width int) {
	bw := bufio.NewWriter(w)
	v := treeview.New(l.Tree(), l, l.Leaf(), treeview.FilterDefault, width)
	v.Each(func(ln treeview.Line) {
		renderTo(bw, ln, width, false)
		bw.WriteByte('\n')
	})
	bw.Flush()
}

func bigMessageLog(t testing.TB, size int) *session.Log {
	var buf bytes.Buffer
	if err := sessiongen.BigMessage(&buf, size); err != nil {
		t.Fatal(err)
	}
	return session.Load(buf.Bytes())
}

// TestTreeLargeMessageCost: the row of a 16 MB user message shows its first
// words, cut at the width, and drawing the tree allocates a small fraction of
// the message, not copies of it (decoding it whole, splitting it into words
// or measuring all of it, as the tree once did, allocates several times its
// size). Bytes allocated are counted, not time, so the check is exact.
func TestTreeLargeMessageCost(t *testing.T) {
	const size = 16 << 20
	l := bigMessageLog(t, size)
	var out strings.Builder
	drawTree(&out, l, 100) // warm up: first-use allocations of the JSON packages
	out.Reset()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	drawTree(&out, l, 100)
	runtime.ReadMemStats(&after)
	rows := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4:\n%s", len(rows), out.String())
	}
	big := rows[2]
	if !strings.Contains(big, "user: ") || !strings.HasSuffix(big, "…") || termtext.Width(big) != 100 {
		t.Errorf("row of the large message is not its text cut at 100 columns: %q", big)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/16 {
		t.Errorf("drawing the tree allocated %d bytes for a %d-byte message, want under %d", alloc, size, size/16)
	}
}

// BenchmarkTreeLargeMessage draws the tree of a session with one 16 MB user
// message as text and as JSON (the loaded log is shared; 'arbor tree' and
// 'arbor tree --json' differ by this part): text must not cost much more.
func BenchmarkTreeLargeMessage(b *testing.B) {
	l := bigMessageLog(b, 16<<20)
	benchTextJSON(b, l)
}

// benchTextJSON draws the tree of l as 'arbor tree' does ("text") and as
// 'arbor tree --json' does ("json").
func benchTextJSON(b *testing.B, l *session.Log) {
	b.Run("text", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			drawTree(io.Discard, l, 100)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bw := bufio.NewWriter(io.Discard)
			if err := session.WriteTreeJSON(bw, l.Tree(), true); err != nil {
				b.Fatal(err)
			}
			bw.Flush()
		}
	})
}

// BenchmarkTreeChain draws a chain of 100,000 entries (internal/sessiongen's
// shapes) as 'arbor tree' does; BENCHMARKS.md has the 1,000,000-entry command.
func BenchmarkTreeChain(b *testing.B) {
	var buf bytes.Buffer
	if err := sessiongen.Chain(&buf, 100000, 24); err != nil {
		b.Fatal(err)
	}
	l := session.Load(buf.Bytes())
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		drawTree(io.Discard, l, 100)
	}
}

// BenchmarkTreePlain draws a chain of 100,000 short user and assistant
// messages (internal/sessiongen's plain shape), text and JSON: 'arbor tree'
// should cost no more than twice 'arbor tree --json'.
func BenchmarkTreePlain(b *testing.B) {
	var buf bytes.Buffer
	if err := sessiongen.Plain(&buf, 100000); err != nil {
		b.Fatal(err)
	}
	l := session.Load(buf.Bytes())
	benchTextJSON(b, l)
}
