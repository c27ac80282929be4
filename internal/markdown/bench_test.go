package markdown

import (
	"strings"
	"testing"
)

// streamed is a long reply: the test reply eight times (5.5 KB, 72 blocks).
func streamed(b *testing.B) string { return strings.Repeat(reply(b)+"\n\n", 8) }

const delta = 32 // bytes a streaming delta adds

// BenchmarkStreamIncremental renders a long reply at every 32-byte delta with
// one Renderer, as the chat does while it streams: each op is the whole
// stream, so ns/op divided by the deltas is the cost of one frame.
func BenchmarkStreamIncremental(b *testing.B) {
	text := streamed(b)
	for b.Loop() {
		r, _ := New(Options{Width: 100, Dark: true, Color: true})
		for n := delta; n < len(text)+delta; n += delta {
			r.Render(text[:min(n, len(text))])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64((len(text)+delta-1)/delta)/1e3, "µs/delta")
}

// BenchmarkStreamFull renders the same stream rendering the whole text at
// every delta (a fresh Renderer each time): what the incremental one saves.
func BenchmarkStreamFull(b *testing.B) {
	text := streamed(b)
	for b.Loop() {
		for n := delta; n < len(text)+delta; n += delta {
			r, _ := New(Options{Width: 100, Dark: true, Color: true})
			r.Render(text[:min(n, len(text))])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64((len(text)+delta-1)/delta)/1e3, "µs/delta")
}

// BenchmarkRender renders the long reply once, from scratch (a reply loaded
// from a session, or a resize).
func BenchmarkRender(b *testing.B) {
	text := streamed(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r, _ := New(Options{Width: 100, Dark: true, Color: true})
		r.Render(text)
	}
}
