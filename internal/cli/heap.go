package cli

import (
	"os"
	"runtime/debug"

	"github.com/arborlog/arbor/session"
)

// heapLimit is the soft limit boundHeap gives the collector: peak memory stays
// under 1 GB (issue 9) for a session whose loaded form leaves it room.
const heapLimit = 900 << 20

// boundHeap keeps the garbage collector from letting the heap grow to twice
// what is live once a large session is loaded: with the default pacing a
// command that builds per-entry state on a 1,000,000-entry session peaks at
// twice its live heap (over 1 GB for ~500 MB live). The limit is set only when
// the loaded session (its file, which entries point into, plus ~300 bytes of
// index an entry) leaves the collector at least 60 % headroom under it, so it
// never makes the collector run continuously; a GOMEMLIMIT the user set wins.
// Small sessions never come near the limit, so it changes nothing for them.
func boundHeap(l *session.Log, path string) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	if limit := heapLimitFor(fi.Size(), l.Len()); limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}

// heapLimitFor is the limit boundHeap sets for a session file of size bytes
// holding entries entries, or 0 for none.
func heapLimitFor(size int64, entries int) int64 {
	loaded := size + 300*int64(entries)
	if loaded*16/10 > heapLimit || loaded < heapLimit/8 { // no headroom, or nowhere near the limit
		return 0
	}
	return heapLimit
}
