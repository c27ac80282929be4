package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestHeapLimitRaisedThenLifted: the soft limit stays while the live heap
// leaves the margin free; after the first collection that does not it is
// raised to the ceiling, and once collections in a row (liftAfter) leave the
// margin under the ceiling no more it is lifted (a command whose live data
// does not fit would otherwise pay for collections back to back).
func TestHeapLimitRaisedThenLifted(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	runtime.GC()
	base := int64(liveHeap())
	limit, ceiling, margin := base+256<<20, base+512<<20, int64(64<<20)
	limitHeap(limit, ceiling, margin)

	small := make([]byte, 16<<20)
	runtime.GC()
	runtime.GC() // the finalizer armed by the first runs after the second
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("limit %d after a collection with room under it, want %d kept", got, limit)
	}
	live := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = 1 // touched, so it is live memory
		}
		return b
	}
	until := func(from int64) int64 {
		deadline := time.Now().Add(10 * time.Second)
		for debug.SetMemoryLimit(-1) == from && time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		return debug.SetMemoryLimit(-1)
	}
	big := live(224 << 20)
	if got := until(limit); got != ceiling {
		t.Fatalf("limit %d after the live heap came within the margin, want it raised to %d", got, ceiling)
	}
	bigger := live(256 << 20)
	if got := until(ceiling); got != math.MaxInt64 {
		t.Fatalf("limit %d after the live heap came within the margin of the ceiling, want it lifted", got)
	}
	runtime.KeepAlive(small)
	runtime.KeepAlive(big)
	runtime.KeepAlive(bigger)
}

// The limit is raised at the first collection within the margin, and lifted
// only at the liftAfter'th in a row within the margin of the ceiling: a peak
// one collection sees costs nothing.
func TestNextLimit(t *testing.T) {
	const limit, ceiling, margin = 850, 896, 96
	steps := []struct {
		live     uint64
		want     int64
		wantOver int
	}{
		{700, limit, 0},
		{760, ceiling, 0}, // within the margin of the limit: raised
		{790, ceiling, 0},
		{810, ceiling, 1}, // within the margin of the ceiling once
		{700, ceiling, 0}, // a peak: it went
		{810, ceiling, 1},
		{820, math.MaxInt64, 0}, // twice in a row: lifted
	}
	cur, over := int64(limit), 0
	for i, s := range steps {
		cur, over = nextLimit(cur, ceiling, margin, over, s.live)
		if cur != s.want || over != s.wantOver {
			t.Fatalf("step %d (live %d): limit %d, %d over; want %d, %d", i, s.live, cur, over, s.want, s.wantOver)
		}
	}
}

// TestBoundHeapLeavesSmallSessions: reading a small session sets no limit.
func TestBoundHeapLeavesSmallSessions(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // restored after the test
	os.Unsetenv("GOMEMLIMIT")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	before := debug.SetMemoryLimit(-1)
	boundHeap(2_000_000)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("a 2 MB session set the limit to %d", got)
	}
	boundHeap(heapLimit) // 850 MiB file: bounded
	if got := debug.SetMemoryLimit(-1); got != heapLimit {
		t.Fatalf("a large session left the limit at %d, want %d", got, int64(heapLimit))
	}
	debug.SetMemoryLimit(heapCeiling)
	boundHeap(heapLimit) // another session opened by a server: the raised limit stays
	if got := debug.SetMemoryLimit(-1); got != heapCeiling {
		t.Fatalf("a second large session set the limit to %d, want %d kept", got, int64(heapCeiling))
	}
}
