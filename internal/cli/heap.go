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

// heapMargin: once a collection leaves this little room under the limit, the
// limit is lifted, since the collector would otherwise run again and again for
// a command whose live data does not fit (it costs twice the CPU or more).
// It is no larger because a collection's live heap counts what was allocated
// while it marked: context --budget on a million pi-shaped entries (chain1m)
// reads up to 740 MiB at its last collection; with a margin of 128 MiB
// the limit can be lifted there, and the command then peaks over 1 GB.
const heapMargin = 96 << 20

// boundHeap keeps the collector from letting the heap grow to twice what is
// live while a session of size bytes is read and used: with the default pacing
// the file's bytes, which entries point into and which hold no pointers, count
// toward the growth the collector allows, so a command on a 190 MB session
// would peak over 1 GB while its live data is under 800 MB. Small sessions
// are left alone, and a GOMEMLIMIT the user set wins.
func boundHeap(size int64) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || size < heapLimit/8 {
		return
	}
	limitHeap(heapLimit, heapMargin)
}

// fileSize is the size of the file at path, 0 when it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// limitHeap sets the soft memory limit and lifts it after the first collection
// that leaves less than margin under it. It checks after every collection and
// costs nothing between them.
func limitHeap(limit, margin int64) {
	debug.SetMemoryLimit(limit)
	watchHeap(limit, margin)
}

func watchHeap(limit, margin int64) {
	// A finalizer runs after each collection that finds its object
	// unreachable; it arms the next one. The object holds a pointer, so the
	// tiny allocator never batches it with others (whose finalizers may not run).
	runtime.SetFinalizer(new(probe), func(*probe) {
		if debug.SetMemoryLimit(-1) != limit {
			return // lifted, or changed by someone else: stop watching
		}
		if liveHeap() > uint64(limit-margin) {
			debug.SetMemoryLimit(math.MaxInt64)
			return
		}
		watchHeap(limit, margin)
	})
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
