package policy

import (
	"runtime"
	"sync"
)

// splitMin is the fewest items a part of a split pass gets: below a few
// thousand jobs handing a part to another goroutine costs more than the
// part (a pass over 100,000 jobs is 1-2 ms of cache misses, a hand-off a
// few microseconds).
var splitMin = 8192

// splitParts is how many parts a pass over n items is cut into: one per
// processor, each at least splitMin items (1: the pass runs serially).
func splitParts(n int) int { return splitPartsOf(n, splitMin) }

// splitPartsOf is splitParts with parts of at least least items.
func splitPartsOf(n, least int) int {
	k := min(runtime.GOMAXPROCS(0), n/max(least, 1))
	return max(k, 1)
}

// split runs fn over [0, n) cut into k fixed, contiguous parts (part i is
// [i*n/k, (i+1)*n/k)), part 0 on the caller's goroutine and the others on
// their own, and returns when all are done. fn must only write what its
// part owns (its items' slots, its part's own scratch), so the result is
// the serial pass's whatever k is.
func split(n, k int, fn func(part, lo, hi int)) {
	if k <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	wg.Add(k - 1)
	for i := 1; i < k; i++ {
		go func() {
			defer wg.Done()
			fn(i, i*n/k, (i+1)*n/k)
		}()
	}
	fn(0, 0, n/k)
	wg.Wait()
}
