package order

import (
	"runtime"

	"github.com/caravan-dl/caravan/internal/split"
)

// The orderings' per-job passes (keying, the radix sort's gathers and
// scatters, the tie runs, the ranking) are split into fixed, contiguous
// parts of positions at 100,000 jobs, where each pass is a few
// milliseconds of memory reads, and the parts are taken by up to
// GOMAXPROCS goroutines (the caller included) as each comes free. Every
// part writes only its own slots and its own state (indexed by part,
// never by goroutine; in a scatter, the slots its counts assign it), so
// the result is the serial pass's, bit for bit, whatever the number of
// parts or goroutines, and whichever goroutine takes which part. There
// are a few parts per goroutine, so one that the OS does not run soon
// (on a loaded host) delays the pass by a part, not by half of it.
// Below parGrain items per part the hand-off costs more than it saves,
// and the passes run serially as before.

// parGrain is the fewest items a part is given (tests lower it).
var parGrain = 8192

// parWorkers, when > 0, replaces GOMAXPROCS as the goroutine limit
// (tests raise it to check the split with more goroutines than cores).
var parWorkers = 0

// maxWorkers bounds the parts a pass is split into: the passes are bound
// by memory bandwidth, which a few cores already saturate.
const maxWorkers = 16

// partsPerProc is how many parts each goroutine is given, on average.
const partsPerProc = 4

// procs is how many goroutines may run a pass.
func procs() int {
	if parWorkers > 0 {
		return parWorkers
	}
	return runtime.GOMAXPROCS(0)
}

// workers is how many parts a pass over n items is split into: 1 (the
// serial pass) on one processor or for small n.
func workers(n int) int {
	p := procs()
	if p <= 1 {
		return 1
	}
	return max(min(partsPerProc*p, maxWorkers, n/max(parGrain, 1)), 1)
}

// rangeOf is the k-th of w contiguous ranges of [0, n).
func rangeOf(k, w, n int) (lo, hi int) { return split.Range(k, w, n) }

// forRanges calls fn(k, lo, hi) once for each of the w parts of [0, n),
// on up to procs() goroutines (the caller's included) taking parts in
// turn (internal/split), and returns when all are done.
func forRanges(n, w int, fn func(k, lo, hi int)) { split.Run(n, w, procs(), fn) }

// partList is one part's list in listParts, and whether the part
// flagged something (a NaN Submit, say).
type partList[E any] struct {
	items []E
	flag  bool
}

// listParts runs each over [0, n) split into parts side by side
// (serially where workers says so), each part appending to a list of its
// own, and returns the lists joined in part order into out: what one
// serial pass appends. flag is whether any part flagged. parts is the
// parts' storage, kept by the caller from one call to the next.
func listParts[E any](n int, parts *[]partList[E], out []E, each func(lo, hi int, buf []E) ([]E, bool)) (_ []E, flag bool) {
	w := workers(n)
	if w <= 1 {
		return each(0, n, out[:0])
	}
	*parts = growKeep(*parts, w)
	ps := (*parts)[:w]
	forRanges(n, w, func(k, lo, hi int) { ps[k].items, ps[k].flag = each(lo, hi, ps[k].items[:0]) })
	out = out[:0]
	for k := range ps {
		out = append(out, ps[k].items...)
		flag = flag || ps[k].flag
	}
	return out, flag
}
