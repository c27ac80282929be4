package compaction

import (
	"runtime"
	"sync"
)

// partsOf is how many parts spread should cut n messages into: one per core,
// and one in all for fewer than minPerPart.
func partsOf(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n/minPerPart)) }

// minPerPart is the fewest messages worth a goroutine of their own.
const minPerPart = 4096

// spread calls f on parts consecutive parts [lo, hi) of [0, n) at once, and
// returns when every call has: a pass over a million messages that reads each
// on its own runs on every core. part numbers the parts from 0.
func spread(parts, n int, f func(part, lo, hi int)) {
	if parts <= 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	size := (n + parts - 1) / parts
	for w := range parts {
		wg.Go(func() { f(w, min(n, w*size), min(n, (w+1)*size)) })
	}
	wg.Wait()
}
