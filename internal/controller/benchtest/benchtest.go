// Package benchtest holds what the controller's benchmarks share.
package benchtest

import (
	"sync"
	"testing"
)

// Parallel runs fn(0..n-1) on workers goroutines; the first error stops
// handing out indexes and fails b.
func Parallel(b testing.TB, n, workers int, fn func(i int) error) {
	b.Helper()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var first error
feed:
	for i := range n {
		select {
		case next <- i:
		case first = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		select {
		case first = <-errs:
		default:
		}
	}
	if first != nil {
		b.Fatal(first)
	}
}
