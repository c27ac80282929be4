package window

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/arborlog/arbor/internal/sessiongen"
	"github.com/arborlog/arbor/session"
)

// BenchmarkBuild plans contexts of realistic coding sessions (about ten
// messages a turn) into budgets from a roomy 150k down to 4k.
func BenchmarkBuild(b *testing.B) {
	for _, turns := range []int{100, 1000} {
		l := session.Load(genSession(11, turns, false))
		ctx := l.Context()
		var size int64
		for _, m := range ctx.Messages {
			size += int64(len(m.Raw))
		}
		for _, budget := range []int{0, 150000, 60000, 4000} {
			b.Run(fmt.Sprintf("messages=%d/budget=%d", len(ctx.Messages), budget), func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Build(ctx, nil, Options{Budget: budget}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkMeasure(b *testing.B) {
	l := session.Load(genSession(11, 1000, false))
	c := l.Cursor("")
	b.ReportAllocs()
	for b.Loop() {
		Measure(c, StatsOptions{})
	}
}

// BenchmarkMeasureChain measures a chain of 100,000 entries as 'arbor stats'
// does (internal/sessiongen's shapes; BENCHMARKS.md has the 1,000,000-entry
// command): B/op is what the planner and the result hold and drop per run.
func BenchmarkMeasureChain(b *testing.B) {
	var buf bytes.Buffer
	if err := sessiongen.Chain(&buf, 100000, 24); err != nil {
		b.Fatal(err)
	}
	l := session.Load(buf.Bytes())
	c := l.Cursor("")
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		Measure(c, StatsOptions{})
	}
}
