package order

import (
	"runtime"
	"sync"
)

// The orderings' per-job passes (keying, the radix sort's gathers and
// scatters, the tie runs, the ranking) are split across GOMAXPROCS
// goroutines over fixed, contiguous position ranges at 100,000 jobs,
// where each pass is a few milliseconds of memory reads. Every worker
// writes only its own slots (or, in a scatter, the slots its counts
// assign it), so the result is the serial pass's, bit for bit, whatever
// the number of workers. Below parGrain jobs per worker the hand-off
// costs more than it saves, and the passes run serially as before.

// parGrain is the fewest items a worker is given (tests lower it).
var parGrain = 8192

// parWorkers, when > 0, replaces GOMAXPROCS as the worker limit (tests
// raise it to check the split with more workers than cores).
var parWorkers = 0

// maxWorkers bounds the split: the passes are bound by memory bandwidth,
// which a few cores already saturate.
const maxWorkers = 16

// workers is how many goroutines a pass over n items is split across.
func workers(n int) int {
	w := parWorkers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	w = min(w, maxWorkers, n/max(parGrain, 1))
	return max(w, 1)
}

// rangeOf is the k-th of w contiguous ranges of [0, n).
func rangeOf(k, w, n int) (lo, hi int) { return k * n / w, (k + 1) * n / w }

// forRanges calls fn(k, lo, hi) for the w ranges of [0, n), concurrently
// (range 0 on the calling goroutine), and returns when all are done.
func forRanges(n, w int, fn func(k, lo, hi int)) {
	if w <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	wg.Add(w - 1)
	for k := 1; k < w; k++ {
		lo, hi := rangeOf(k, w, n)
		go func() {
			defer wg.Done()
			fn(k, lo, hi)
		}()
	}
	lo, hi := rangeOf(0, w, n)
	fn(0, lo, hi)
	wg.Wait()
}
