// Package split runs a pass over n items in fixed, contiguous parts on a
// few goroutines, for the policy core's per-job passes at 100,000 jobs
// (a few milliseconds of memory reads each).
//
// Part i of k is [i*n/k, (i+1)*n/k). Parts are claimed one at a time by
// the caller and up to goroutines-1 helpers, so a helper the OS does not
// run soon (a loaded host) leaves its share to the others instead of
// holding the pass up; the caller waits for the parts, not for helpers
// that started after every part was claimed. A pass whose parts write
// only what they own (their items' slots, their part's own scratch)
// gives the serial pass's result, whatever k and whichever goroutine ran
// which part.
package split

import (
	"runtime"
	"sync/atomic"
)

// Procs is how many goroutines a pass may use by default: GOMAXPROCS.
func Procs() int { return runtime.GOMAXPROCS(0) }

// Range is part i of k parts of [0, n).
func Range(i, k, n int) (lo, hi int) { return i * n / k, (i + 1) * n / k }

// Run calls fn(i, lo, hi) once for each of the k parts of [0, n), on up
// to goroutines goroutines (the caller's included), and returns when
// every part is done. With k ≤ 1 it is one call on the caller's
// goroutine, with no allocation.
func Run(n, k, goroutines int, fn func(part, lo, hi int)) {
	if k <= 1 {
		fn(0, 0, n)
		return
	}
	if goroutines > 1 && runHot(n, k, goroutines, fn) { // hot.go
		return
	}
	var next atomic.Int32
	done := make(chan struct{}, k)
	run := func(helper bool) (did int) {
		for {
			i := int(next.Add(1)) - 1
			if i >= k {
				return did
			}
			lo, hi := Range(i, k, n)
			fn(i, lo, hi)
			did++
			if helper {
				done <- struct{}{}
			}
		}
	}
	for range min(goroutines, k) - 1 {
		go run(true)
	}
	for range k - run(false) {
		<-done
	}
}
