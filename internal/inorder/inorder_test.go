package inorder

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestDoInOrder: every item is made once and used in order, however n, the
// runs and the cores fall.
func TestDoInOrder(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 100, 1000} {
			for _, size := range []int{0, 1, 3, 64, 2000} {
				var made atomic.Int64
				next := 0
				err := Do(n, size, func(lo, hi int) []int {
					var v []int
					for i := lo; i < hi; i++ {
						v = append(v, i)
						made.Add(1)
					}
					return v
				}, func(v []int) error {
					for _, i := range v {
						if i != next {
							t.Fatalf("procs %d n %d size %d: item %d used after %d", procs, n, size, i, next-1)
						}
						next++
					}
					return nil
				})
				if err != nil || next != n || made.Load() != int64(n) {
					t.Fatalf("procs %d n %d size %d: used %d, made %d of %d (%v)", procs, n, size, next, made.Load(), n, err)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// TestDoStopsAtAnError: consume's error is returned, nothing after it is
// used, and the runs made stay a few ahead of it.
func TestDoStopsAtAnError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	stop := errors.New("stop")
	var made atomic.Int64
	used := 0
	err := Do(1_000_000, 10, func(lo, hi int) int {
		made.Add(1)
		return lo
	}, func(lo int) error {
		used++
		if lo == 50 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || used != 6 {
		t.Fatalf("Do = %v after %d runs, want stop after 6", err, used)
	}
	if m := made.Load(); m > 6+2*2+2 {
		t.Fatalf("%d runs made for 6 used", m)
	}
}
