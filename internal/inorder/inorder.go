// Package inorder runs one pass over many items on every core, and uses what
// it made of them in their order.
package inorder

import (
	"runtime"
	"sync"
)

// Do cuts [0, n) into runs of size items (the last may be shorter), calls
// produce on the runs on every core, and consume with what produce returned,
// run after run in order, on the calling goroutine. Runs are made at most
// twice as many as there are cores ahead of consume, so what is waiting stays
// small however large n is. Do stops at consume's first error and returns it;
// produce is then called on no further run.
func Do[T any](n, size int, produce func(lo, hi int) T, consume func(T) error) error {
	if n <= 0 {
		return nil
	}
	size = max(1, size)
	runs := (n + size - 1) / size
	workers := min(runtime.GOMAXPROCS(0), runs)
	if workers <= 1 {
		for lo := 0; lo < n; lo += size {
			if err := consume(produce(lo, min(n, lo+size))); err != nil {
				return err
			}
		}
		return nil
	}
	type run struct {
		v    T
		done chan struct{}
	}
	order := make(chan *run, 2*workers)
	work := make(chan func())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for f := range work {
				f()
			}
		})
	}
	wg.Go(func() {
		defer close(order)
		defer close(work)
		for lo := 0; lo < n; lo += size {
			hi := min(n, lo+size)
			r := &run{done: make(chan struct{})}
			select {
			case order <- r:
			case <-stop:
				return
			}
			select {
			case work <- func() { r.v = produce(lo, hi); close(r.done) }:
			case <-stop:
				return
			}
		}
	})
	defer wg.Wait()
	defer close(stop)
	for r := range order {
		<-r.done
		if err := consume(r.v); err != nil {
			return err
		}
	}
	return nil
}
