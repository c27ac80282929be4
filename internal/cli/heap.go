package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// heapLimit is the soft limit boundHeap gives the collector, so that a command
// on a session as large as issue 9's (1,000,000 entries, ~190 MB) peaks under
// 1 GB: the runtime's memory plus the program's own pages stay ~50 MiB above it.
const heapLimit = 850 << 20

// heapCeiling is the limit the collector gets once a collection leaves less
// than heapMargin under heapLimit: a command whose live data is a little
// over what heapLimit allows (serve's getMessages or context --budget on a
// million pi-shaped entries: 760-780 MiB at a collection while planning)
// still peaks under 1 GB, where lifting the limit at once let the heap grow
// to twice what was live, over 1 GB.
const heapCeiling = 896 << 20

// heapMargin: once a collection leaves this little room under the limit, the
// limit is raised to heapCeiling, and once collections in a row leave this
// little under that (liftAfter), lifted, since the collector would otherwise
// run again and again for a command whose live data does not fit (it costs
// twice the CPU or more). It is no larger because a collection's
// live heap counts what was allocated while it marked: context --budget on a
// million pi-shaped entries (chain1m) reads up to 760 MiB at its last
// collection.
const heapMargin = 96 << 20

// boundHeap keeps the collector from letting the heap grow to twice what is
// live while a session of size bytes is read and used: with the default pacing
// the file's bytes, which entries point into and which hold no pointers, count
// toward the growth the collector allows, so a command on a 190 MB session
// would peak over 1 GB while its live data is under 800 MB. Small sessions
// are left alone, a GOMEMLIMIT the user set wins, and a limit already set
// stays (a server opening another session).
func boundHeap(size int64) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || size < heapLimit/8 {
		return
	}
	if l := debug.SetMemoryLimit(-1); l == heapLimit || l == heapCeiling {
		return
	}
	limitHeap(heapLimit, heapCeiling, heapMargin)
}

// fileSize is the size of the file at path, 0 when it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// limitHeap sets the soft memory limit; after the first collection that
// leaves less than margin under it, it raises it to ceiling, and after
// liftAfter collections in a row that leave less than margin under that, it
// lifts it. It checks after every collection and costs nothing between them.
func limitHeap(limit, ceiling, margin int64) {
	debug.SetMemoryLimit(limit)
	watchHeap(limit, ceiling, margin, 0)
}

// liftAfter is how many collections in a row must find the live heap within
// the margin of the ceiling before the limit is lifted: a peak that one
// collection sees and the next does not (-p planning a million messages,
// then letting go of the plan) does not cost the limit, while live data that
// does not fit costs one collection more before it is lifted.
const liftAfter = 2

// watchHeap checks the live heap after the next collection; over is how many
// collections in a row have found it within margin of limit.
func watchHeap(limit, ceiling, margin int64, over int) {
	// A finalizer runs after each collection that finds its object
	// unreachable; it arms the next one. The object holds a pointer, so the
	// tiny allocator never batches it with others (whose finalizers may not run).
	runtime.SetFinalizer(new(probe), func(*probe) {
		if debug.SetMemoryLimit(-1) != limit {
			return // lifted, or changed by someone else: stop watching
		}
		switch next, over := nextLimit(limit, ceiling, margin, over, liveHeap()); next {
		case limit:
			watchHeap(limit, ceiling, margin, over)
		case ceiling:
			limitHeap(ceiling, ceiling, margin)
		default:
			debug.SetMemoryLimit(next)
		}
	})
}

// nextLimit is the limit after a collection that left live bytes, and how
// many collections in a row have then found the live heap within margin of it.
func nextLimit(limit, ceiling, margin int64, over int, live uint64) (int64, int) {
	switch {
	case live <= uint64(limit-margin):
		return limit, 0
	case limit < ceiling:
		return ceiling, 0
	case over+1 < liftAfter:
		return limit, over + 1
	}
	return math.MaxInt64, 0
}

// probe is the object whose finalizer watchHeap arms.
type probe struct{ _ *byte }

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
