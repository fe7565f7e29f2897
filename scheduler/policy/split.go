package policy

import (
	"runtime"

	parts "github.com/caravan-dl/caravan/internal/split"
)

// splitMin is the fewest items a part of a split pass gets: below a few
// thousand jobs handing a part to another goroutine costs more than the
// part (a pass over 100,000 jobs is 1-2 ms of cache misses, a hand-off a
// few microseconds).
var splitMin = 8192

// partsPerProc is how many parts a split pass makes per processor: parts
// are claimed as goroutines get to them, so a helper the OS does not run
// (a busy host) leaves its share to the others instead of holding the
// pass up.
const partsPerProc = 4

// splitParts is how many parts a pass over n jobs is cut into (1: the
// pass runs serially).
func splitParts(n int) int { return splitPartsOf(n, splitMin) }

// splitPartsOf is splitParts with parts of at least least items.
func splitPartsOf(n, least int) int {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		return 1
	}
	return max(min(procs*partsPerProc, n/max(least, 1)), 1)
}

// split runs fn over [0, n) cut into k fixed, contiguous parts (part i is
// [i*n/k, (i+1)*n/k)), claimed one at a time by the caller and up to
// GOMAXPROCS-1 helper goroutines, and returns when every part is done. fn
// must only write what its part owns (its items' slots, its part's own
// scratch), so the result is the serial pass's whatever k is and
// whichever goroutine ran which part.
func split(n, k int, fn func(part, lo, hi int)) {
	parts.Run(n, k, runtime.GOMAXPROCS(0), fn)
}
