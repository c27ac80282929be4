package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestHeapLimitLifts: the soft limit stays while the live heap leaves the
// margin free, and is lifted after the first collection that does not (a
// command whose live data does not fit would otherwise pay for collections
// back to back).
func TestHeapLimitLifts(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	runtime.GC()
	base := int64(liveHeap())
	limit, margin := base+256<<20, int64(64<<20)
	limitHeap(limit, margin)

	small := make([]byte, 16<<20)
	runtime.GC()
	runtime.GC() // the finalizer armed by the first runs after the second
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("limit %d after a collection with room under it, want %d kept", got, limit)
	}
	big := make([]byte, 224<<20)
	for i := range big {
		big[i] = 1 // touched, so it is live memory
	}
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) == limit && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("limit %d after the live heap came within the margin, want it lifted", got)
	}
	runtime.KeepAlive(small)
	runtime.KeepAlive(big)
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
}
