package order

import (
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// incremental remembers the last ranking of an ordering whose snapshots
// list jobs in (Submit, ID) order, so the next one re-ranks only what
// changed. Between two events of a replay a handful of jobs start, stop,
// arrive or change queue while a thousand keep their keys, and sorting
// them all again was most of a decision.
type incremental struct {
	keys []keyed // last call's keys (and jobs), listed order
	rank []int32 // their ranks (from order, when stale)
	// order is the last call's keys in rank order; stale: rank is not
	// derived from it yet
	order []int32
	stale bool
	// buffers: prev indexes, rank slots, moved jobs (asc: listed
	// order; sorted), and two outputs
	prev, slot, moved, asc, sorted []int32
	out, merged                    []int32
	// ascParts and outParts are classify's and sortMatched's per-part
	// lists (listParts)
	ascParts, outParts []partList[int32]
	// full: the last call sorted in full (fair's and churned Gittins'
	// every call), so this one counts its changes before ranks
	full bool
}

// sortIncremental is sortKeyed's order, re-ranking only the jobs whose
// keys changed since the last call. For jobs listed in (Submit, ID) order
// (Snapshot.SubmitOrdered) the last call's jobs are found by walking both
// lists together; otherwise by position, as a scheduler that lists its
// jobs in a stable order sends nearly the same list every round. Jobs that
// were in the last call with the same keys keep their relative order
// (sortKeyed's order is compareKeyed, then position, and a job matched by
// position kept its position); the others are sorted and merged in by
// binary search. O(n + m log n) for m changed jobs. Duplicate (Submit, ID)
// pairs in a listed snapshot, and lists where most jobs changed, fall back
// to the full sort.
func (sc *scratch) sortIncremental(ks []keyed, listed bool) []policy.Ranked {
	prev, ok := sc.inc.matchAny(ks, listed)
	return sc.sortMatched(ks, prev, ok)
}

// matchAny is match for a listed snapshot, else matchPositions.
func (in *incremental) matchAny(ks []keyed, listed bool) ([]int32, bool) {
	if listed {
		return in.match(ks)
	}
	return in.matchPositions(ks), true
}

// sortMatched is sortIncremental with match already done (an ordering
// that reuses last call's keys, like Gittins' indexes, matches first).
func (sc *scratch) sortMatched(ks []keyed, prev []int32, ok bool) []policy.Ranked {
	in := &sc.inc
	if !ok {
		return sc.sortFull(ks, nil)
	}
	if sc.allMove || in.full && sc.manyChanged(ks, in.keys, prev) {
		return sc.sortFull(ks, prev) // the loop below would find as much, after ranks
	}
	in.full = false
	in.ranks()
	in.slot = grow(in.slot, len(in.keys))
	for r := range in.slot {
		in.slot[r] = -1
	}
	asc, ok := sc.classify(ks, prev)
	if !ok {
		return sc.sortFull(ks, prev)
	}
	if 2*len(asc) > len(ks) {
		mergedMost.Add(1)
	}
	defer sc.forgetRun()
	if len(asc) >= movedRadix {
		// too many to insert: radix-sort them (listed order, for ties)
		out, _ := listParts(len(in.slot), &in.outParts, in.out, func(lo, hi int, out []int32) ([]int32, bool) {
			for _, i := range in.slot[lo:hi] {
				if i >= 0 {
					out = append(out, i)
				}
			}
			return out, false
		})
		return sc.mergeIn(ks, sc.sortMoved(ks, asc), out)
	}
	out, moved := in.out[:0], in.moved[:0]
	for _, i := range in.slot {
		switch {
		case i >= 0:
			out = append(out, i)
		case i <= -2:
			moved = append(moved, -2-i)
		}
	}
	// changed jobs, listed in their last order, which their new keys
	// mostly keep (running jobs' indexes move together): nearly sorted;
	// then the new ones
	for _, i := range asc {
		if prev[i] < 0 {
			moved = append(moved, i)
		}
	}
	sortNearly(ks, moved)
	in.moved = moved
	return sc.mergeIn(ks, moved, out)
}

// classify lists the jobs of ks that are new or changed their keys since
// the last call (by prev), in listed order, and writes each other job at
// its last rank in slot; ok is false as soon as so many moved that
// sortMatched sorts in full (fair's keys all move with Now). Split
// across workers (parallel.go): each part writes slot at its own jobs'
// last ranks, which prev and rank make distinct.
func (sc *scratch) classify(ks []keyed, prev []int32) (asc []int32, ok bool) {
	in := &sc.inc
	asc, many := listParts(len(ks), &in.ascParts, in.asc, func(lo, hi int, asc []int32) ([]int32, bool) {
		for i := lo; i < hi; i++ {
			switch p := prev[i]; {
			case p < 0: // new
			case sameKeys(&ks[i], &in.keys[p]):
				in.slot[in.rank[p]] = int32(i)
				continue
			default:
				in.slot[in.rank[p]] = -2 - int32(i) // changed keys
			}
			if asc = append(asc, int32(i)); sc.manyMoved(len(asc), len(ks)) {
				return asc, true
			}
		}
		return asc, false
	})
	in.asc = asc
	return asc, !many && !sc.manyMoved(len(asc), len(ks))
}

// sortMoved radix-sorts the moved jobs asc (listed order). Their
// coarse passes may be the ordering's own for moved jobs (movedCoarse),
// with the run's members (keyRun), which all share a prefix, sorted
// apart and spliced in.
func (sc *scratch) sortMoved(ks []keyed, asc []int32) []int32 {
	in, sub := &sc.inc, sc.subsets()
	coarse, bits := sc.coarse, sc.coarseBits
	if sc.movedCoarse != 0 {
		coarse, bits = sc.movedCoarse, sc.movedCoarseBits
	}
	run := sc.run
	if run == nil || !run.on {
		in.sorted = sub.sort(ks, asc, in.sorted, coarse, bits)
		return in.sorted
	}
	members, others := run.joined[:0], run.rest[:0]
	for _, i := range asc {
		if samePrefix(&ks[i], &run.prefix) {
			members = append(members, i)
		} else {
			others = append(others, i)
		}
	}
	run.joined, run.rest = members, others
	if len(members) > 0 {
		movedSplits.Add(1)
	}
	// the members share queue, k[0] and k[1]: sorted in full by k[2]
	run.sorted2 = sub.sort(ks, members, run.sorted2, sc.coarse, sc.coarseBits)
	in.sorted = sub.sort(ks, others, in.sorted, coarse, bits)
	run.out = splice(ks, in.sorted, run.sorted2, &run.prefix, run.out)
	return run.out
}

// movedSplits counts the re-ranks that split a run off their moved jobs
// (for tests).
var movedSplits atomic.Int64

// movedRadix is the fewest moved jobs that are radix-sorted rather than
// sorted by insertion or comparisons before the merge (tests lower it).
var movedRadix = 2048

// sortFull ends sortMatched with a full sort; prev, unless nil, matches
// ks with the last call's keys (for the run's order, keyRun).
func (sc *scratch) sortFull(ks []keyed, prev []int32) []policy.Ranked {
	var idx []int32
	if sc.useRun(len(ks)) {
		idx = sc.orderRun(ks, prev)
	} else if near, ok := sc.sortNear(ks, prev); ok { // sort_near.go
		idx = near
	} else {
		idx = sc.order(ks)
	}
	sc.inc.full = true
	sc.inc.keys = sc.inc.keys[:0]
	sc.remember(ks, idx)
	return sc.ranked(ks, idx)
}

// mergeIn ends sortMatched: the moved jobs, sorted, are merged into
// out, the others in their last order.
func (sc *scratch) mergeIn(ks []keyed, moved, out []int32) []policy.Ranked {
	in := &sc.inc
	in.out = out
	if len(moved) > 0 {
		in.merged = mergeSorted(ks, out, moved, in.merged)
		out = in.merged
	}
	r := sc.ranked(ks, out)
	sc.remember(ks, out)
	return r
}

// manyChanged reports whether so many jobs of ks are new or changed
// their keys since last (by prev) that sortMatched sorts in full: the
// loop there counts the same jobs and stops at the same threshold, but
// only after deriving every rank. Split across workers (parallel.go).
func (sc *scratch) manyChanged(ks, last []keyed, prev []int32) bool {
	w := workers(len(ks))
	if w <= 1 {
		return sc.manyMoved(countChanged(ks, last, prev, 0, len(ks)), len(ks))
	}
	var counts [maxWorkers]int
	forRanges(len(ks), w, func(k, lo, hi int) { counts[k] = countChanged(ks, last, prev, lo, hi) })
	total := 0
	for _, c := range counts[:w] {
		total += c
	}
	return sc.manyMoved(total, len(ks))
}

// countChanged counts the jobs of ks[lo:hi] that are new or changed
// their keys since last.
func countChanged(ks, last []keyed, prev []int32, lo, hi int) int {
	c := 0
	for i := lo; i < hi; i++ {
		if p := prev[i]; p < 0 || !sameKeys(&ks[i], &last[p]) {
			c++
		}
	}
	return c
}

// match finds, for each job of ks, its index in the last call's list (or
// -1), walking both (Submit, ID)-ordered lists together. ok is false if
// the list is not strictly ordered by (Submit, ID).
func (in *incremental) match(ks []keyed) (prev []int32, ok bool) {
	prev = grow(in.prev, len(ks))
	in.prev = prev
	k := 0
	for i := range ks {
		j := ks[i].job
		if i > 0 && compareSubmit(ks[i-1].job, j) >= 0 {
			return nil, false
		}
		prev[i] = -1
		for k < len(in.keys) && in.keys[k].job != j && compareSubmit(in.keys[k].job, j) < 0 {
			k++ // departed
		}
		if k < len(in.keys) && (in.keys[k].job == j || compareSubmit(in.keys[k].job, j) == 0) {
			prev[i] = int32(k)
			k++
		}
	}
	return prev, true
}

// matchPositions finds, for each job of ks, its index in the last call's
// list when it was listed at the same position (the same job, or one with
// its ID and Submit); -1 otherwise, which only costs a merge.
func (in *incremental) matchPositions(ks []keyed) []int32 {
	prev := grow(in.prev, len(ks))
	in.prev = prev
	for i := range ks {
		prev[i] = -1
		if i < len(in.keys) && sameJob(in.keys[i].job, ks[i].job) {
			prev[i] = int32(i)
		}
	}
	return prev
}

// sameJob reports whether a and b are one job or list the same (ID, Submit).
func sameJob(a, b *policy.Job) bool {
	return a == b || (a.ID == b.ID && a.Submit == b.Submit)
}

// manyMoved reports that so many of n jobs changed (m) that sorting all
// of them again is cheaper than merging the changed ones in.
// Below movedRadix they are sorted by comparisons, so they must be a
// small part; from it they are radix-sorted and merged in one pass,
// which costs a full sort's time at about half the jobs, or more where
// the ordering's moved jobs sort in fewer passes (movedMost).
func (sc *scratch) manyMoved(m, n int) bool {
	if n < 4*movedRadix {
		return m > 64 && m > n/4
	}
	eighths := sc.movedMost
	if eighths == 0 {
		eighths = 4
	}
	return m > n*eighths/8
}

// mergedMost counts the re-ranks that merged in more than half of their
// jobs (movedMost; for tests).
var mergedMost atomic.Int64

// remember keeps this call's keys and order (idx lists ks in rank
// order; its ranks are derived when the next call needs them, which a
// full sort, fair's every call, does not). ks is the scratch key buffer:
// rather than copying it, remember swaps it with the one holding the
// last call's keys, which the next call then fills. idx is kept as it
// is: it must stay untouched until the next call's ranks (only order,
// ranked's callers and the merge write those buffers, after ranks).
func (sc *scratch) remember(ks []keyed, idx []int32) {
	in := &sc.inc
	in.order, in.stale = idx, true
	sc.ks, in.keys = in.keys, ks
}

// ranks fills rank from the last call's order, once.
func (in *incremental) ranks() {
	if !in.stale {
		return
	}
	in.rank = grow(in.rank, len(in.order))
	for r, i := range in.order {
		in.rank[i] = int32(r)
	}
	in.stale = false
}

// sameKeys reports identical sort keys (queue and k, bit for bit: keys
// that sort alike but differ in bits, -0 and +0, merely count as moved).
func sameKeys(a, b *keyed) bool {
	return a.queue == b.queue && math.Float64bits(a.k[0]) == math.Float64bits(b.k[0]) &&
		math.Float64bits(a.k[1]) == math.Float64bits(b.k[1]) && math.Float64bits(a.k[2]) == math.Float64bits(b.k[2])
}

// mergeSorted merges the sorted index lists a and b (compareAt order)
// into buf, placing each b by galloping from the last insertion point:
// O(|b| log(|a|/|b|)) comparisons. Each comparison reads a key at random
// (a is in rank order, ks in list order), one after another, so at
// 100,000 jobs the merge is split (mergeParts): lucid's merged ~20,000
// moved running jobs into ~100,000 others on one core, ~7 ms of CPU.
func mergeSorted(ks []keyed, a, b, buf []int32) []int32 {
	out := slices.Grow(buf[:0], len(a)+len(b))[:len(a)+len(b)]
	if w := workers(len(a) + len(b)); w > 1 && len(b) >= w {
		mergeParts(ks, a, b, out, w)
	} else {
		mergeInto(ks, a, b, out)
	}
	return out
}

// mergeParts is mergeInto split into w ranges of b side by side. The
// part of a merged with a range is what the serial merge places between
// the range's first element and the next range's: the elements ordered
// after the one and before the other, found by binary search on the
// serial merge's own test. So every element lands where the serial merge
// puts it (a and b hold distinct indexes, which compareAt never ties).
// Every range of b is non-empty (len(b) ≥ w).
func mergeParts(ks []keyed, a, b, out []int32, w int) {
	var starts [maxWorkers + 1]int // a's split before each part of b
	starts[w] = len(a)
	for k := 1; k < w; k++ {
		lo, _ := rangeOf(k, w, len(b))
		x := b[lo]
		starts[k] = starts[k-1] + sort.Search(len(a)-starts[k-1], func(m int) bool {
			return compareAt(ks, a[starts[k-1]+m], x) >= 0
		})
	}
	forRanges(len(b), w, func(k, lo, hi int) {
		al, ah := starts[k], starts[k+1]
		mergeInto(ks, a[al:ah], b[lo:hi], out[al+lo:ah+hi:ah+hi])
	})
}

// mergeInto is mergeSorted's serial merge into out (len(a)+len(b)).
func mergeInto(ks []keyed, a, b, out []int32) {
	if len(a)+len(b) >= linearMergeMin && len(b)*linearMergeShare >= len(a) {
		mergeLinear(ks, a, b, out)
		return
	}
	mergeGallop(ks, a, b, out)
}

// mergeGallop is mergeInto by galloping to each element of b.
func mergeGallop(ks []keyed, a, b, out []int32) {
	n, lo := 0, 0
	for _, x := range b {
		before := func(y int32) bool { return compareAt(ks, y, x) < 0 }
		step := 1
		for lo+step <= len(a) && before(a[lo+step-1]) {
			step *= 2
		}
		l, h := lo+step/2, min(lo+step, len(a)) // a[l-1] is before x, a[h] is not
		for l < h {
			m := int(uint(l+h) >> 1)
			if before(a[m]) {
				l = m + 1
			} else {
				h = m
			}
		}
		n += copy(out[n:], a[lo:l])
		out[n] = x
		n, lo = n+1, l
	}
	copy(out[n:], a[lo:])
}

// A merge gallops to each element of b through a in rank order, each
// comparison a read of a key at random that waits on the last: ~20 ns
// apiece at 100,000 jobs. Where b is more than a small share of a
// (lucid's ~20,000 moved running jobs into ~100,000 others) the merge
// instead gathers both lists' queues and first keys in sequence (reads
// that do not wait on each other) and merges them one by one.
const (
	// linearMergeMin is the fewest elements merged linearly
	linearMergeMin = 4096
	// linearMergeShare: b is merged linearly once len(b) times it is at
	// least len(a)
	linearMergeShare = 32
)

// mergeItems holds the gathered keys of linear merges (their parts run
// side by side, and orderings in separate Frameworks may merge at once).
var mergeItems = sync.Pool{New: func() any { return new([]nearItem) }}

// mergeLinear is mergeInto's result by a linear merge on gathered keys
// (nearItem): a's element goes first while it ranks before b's.
func mergeLinear(ks []keyed, a, b, out []int32) {
	buf := mergeItems.Get().(*[]nearItem)
	items := grow(*buf, len(a)+len(b))
	ga, gb := items[:len(a)], items[len(a):]
	gather(ks, a, ga)
	gather(ks, b, gb)
	i, n := 0, 0
	for j := range gb {
		for i < len(ga) && itemAfter(ks, &gb[j], &ga[i]) {
			out[n] = ga[i].i
			i, n = i+1, n+1
		}
		out[n] = gb[j].i
		n++
	}
	copy(out[n:], a[i:])
	*buf = items
	mergeItems.Put(buf)
}

// gather writes each index of idx with its queue and first key's
// integer to items (len(idx)).
func gather(ks []keyed, idx []int32, items []nearItem) {
	for p, i := range idx {
		k := &ks[i]
		items[p] = nearItem{f: floatKey(k.k[0]), q: k.queue, i: i}
	}
}

// compareAt is sortKeyed's order of ks[a] and ks[b]: compareKeyed, then
// position (full ties only arise from duplicate (Submit, ID) pairs).
func compareAt(ks []keyed, a, b int32) int {
	if c := compareKeyed(&ks[a], &ks[b]); c != 0 {
		return c
	}
	return cmpInt(int(a), int(b))
}

// sortNearly sorts the indexes idx of ks in compareAt order: by
// insertion while the input is nearly sorted (a bounded number of moves),
// else by pdqsort.
func sortNearly(ks []keyed, idx []int32) {
	cmp := func(a, b int32) int { return compareAt(ks, a, b) }
	if !insertNearly(idx, cmp) {
		slices.SortFunc(idx, cmp)
	}
}

// insertNearly sorts xs by cmp by insertion; past a budget of moves it
// stops and reports false (xs is then still a permutation of itself).
func insertNearly[T any](xs []T, cmp func(a, b T) int) bool {
	budget := 4*len(xs) + 16
	for i := 1; i < len(xs); i++ {
		x, j := xs[i], i
		for j > 0 && cmp(xs[j-1], x) > 0 {
			xs[j] = xs[j-1]
			j--
			if budget--; budget == 0 {
				xs[j] = x
				return false
			}
		}
		xs[j] = x
	}
	return true
}
