package order

import (
	"math"
	"math/bits"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// queuedAt is when a job joined its queue: QueuedSince, or Submit if the
// executor never set it.
func queuedAt(j *policy.Job) policy.Seconds {
	if j.QueuedSince > j.Submit {
		return j.QueuedSince
	}
	return j.Submit
}

// keyed is a job with its sort keys, compared in order (lower first).
type keyed struct {
	job   *policy.Job
	queue int32
	// at is 1 + the job's index in the snapshot (0 = not recorded), for
	// Ranked.Index; it shares a word with queue, so a record stays 40
	// bytes (at 100,000 jobs every byte is read from memory)
	at int32
	k  [3]float64
}

// set writes a key's fields in place. A keyed literal stored into a
// slice element is built on the stack and copied over (its array keeps
// it out of registers), and the copy's 16-byte reads of the 4-byte
// stores just made stall: measured, a pass over 125,000 keys took 1.6
// ms that way and 1.0 ms field by field.
func (k *keyed) set(j *policy.Job, queue, at int32, key [3]float64) {
	k.job, k.queue, k.at, k.k = j, queue, at, key
}

// scratch holds an ordering's buffers from one decision to the next: a
// decision ranks ~14,000 jobs, and allocating the job list, the keys, the
// radix buffers and the result afresh every time was most of a decision's
// garbage (and so of its GC pauses, which set the p99). An ordering that
// uses it returns a slice valid until its next Order call.
type scratch struct {
	jobs []*policy.Job
	ks   []keyed
	idx  []int32
	rad  radix
	out  []policy.Ranked
	inc  incremental
	near nearSort // sort_near.go
	kc   keyCache
	// at is 1 + the snapshot index of each job of out, valid when
	// atValid (rankIndexes)
	at      []int32
	atValid bool
	// coarse, when non-zero, makes order's radix passes stop at field
	// coarse-1 (k[coarse-1]) and its bits above the low coarseBits,
	// leaving the rest to comparisons inside the runs that tie so far:
	// for orderings that sort in full every call, where the passes are
	// most of the cost, and keys that rarely share those bits (see
	// coarseRho, coarseTime)
	coarse     int
	coarseBits uint
	// split: this ordering's keying passes run split across goroutines
	// (parallel.go), which also promises that the key function it
	// passes to trackedKeys reads only the job (and fixed config), so it
	// may run on several goroutines at once (lucid's keeps state). Set by
	// the orderings that sort in full under churn (fair, 2D-Gittins):
	// for the others, whose re-rank is incremental and light, splitting
	// measured no faster on 2 cores (BenchmarkOrderSplit). The radix
	// sort and the ranking pass (ranked) split for every ordering.
	split bool
	// keyInOrder: the keying pass is split as with split, but the key
	// function keeps state and is called in list order on one goroutine
	// (lucid's: it finds each job's slot by scanning the list, and
	// creates estimate entries); only the changed jobs are keyed, the
	// rest of the pass runs side by side
	keyInOrder bool
	// run, when set for a call (setRun), sorts a large set of jobs that
	// share a key prefix apart (keyRun)
	run *keyRun
	// sub radix-sorts subsets of the keys (made on first use)
	sub *subSorter
	// movedCoarse and movedCoarseBits, when movedCoarse is non-zero,
	// are coarse and coarseBits for an incremental call's many moved
	// jobs (sortMoved), where an ordering knows its keys rarely tie
	movedCoarse     int
	movedCoarseBits uint
	// movedMost, when non-zero, is the eighths of the jobs that may move
	// and still be merged in rather than sorted in full (manyMoved;
	// default half): for an ordering whose moved jobs sort in fewer
	// passes than all of them (movedCoarse)
	movedMost int
	// allMove: every key moves every call (fair's ρ, with Now and the
	// count of active jobs), so sortMatched sorts in full without first
	// counting the moved keys, a pass over this call's keys and the last
	// call's (the order is the same: compareAt is a total order)
	allMove bool
	// self is resortLast's identity match (Prepare)
	self []int32
	// lazy: leave a tracked ranking's jobs to the caller (OrderIndexed);
	// pq is then each key's position and queue, in key order
	lazy bool
	pq   []posQueue
}

// posQueue is a key's 1 + position (keyed.at) and queue: a lazy ranking
// reads them at random from 8 bytes a job instead of 40.
type posQueue struct{ at, queue int32 }

// coarseRho drops 33 low bits (three 11-bit passes of six): the top 31
// bits of a float64 (sign, exponent, 19 bits of mantissa) separate keys
// more than ~2e-6 apart relatively. For a ratio like fair's ρ only
// near-equal values share them.
const coarseRho = 33

// coarseTime drops 22 low bits (two passes of six): keys more than
// ~1e-9 apart relatively are separated, i.e. times in Unix seconds (as
// the live scheduler's) ~1.6 s apart. Dropping 33 would leave every job
// queued in the same ~50 minutes in one run, sorted by comparisons.
const coarseTime = 22

// rankIndexes is RankIndexes of the last ranking sc returned.
func (sc *scratch) rankIndexes() []int32 {
	if !sc.atValid || len(sc.at) != len(sc.out) {
		return nil
	}
	return sc.at
}

// active lists the queued and running jobs of a snapshot.
func (sc *scratch) active(s *policy.Snapshot) []*policy.Job {
	sc.jobs = sc.jobs[:0]
	for _, j := range s.Jobs {
		if isActive(j) {
			sc.jobs = append(sc.jobs, j)
		}
	}
	return sc.jobs
}

// activeKeys lists the queued and running jobs of a snapshot keyed by
// key, in one pass. At 100,000 jobs the jobs do not fit in any cache, so
// every pass over them reads them from memory again: listing the active
// jobs, then keying them, then (Tiresias) reading their service took a
// pass each, a fifth of a decision. The result is sc's key buffer, as
// keys returns it.
func (sc *scratch) activeKeys(s *policy.Snapshot, key func(j *policy.Job) keyed) []keyed {
	sc.kc.on = false
	ks := sc.keys(len(s.Jobs))[:0]
	for i, j := range s.Jobs {
		if isActive(j) {
			k := key(j)
			k.at = int32(i + 1)
			ks = append(ks, k)
		}
	}
	sc.ks = ks
	return ks
}

// isActive: queued or running (a snapshot may also list finished jobs).
func isActive(j *policy.Job) bool {
	return j != nil && (j.State == policy.Queued || j.State == policy.Running)
}

// keys returns room for n keyed records; callers set every one.
func (sc *scratch) keys(n int) []keyed {
	sc.ks = grow(sc.ks, n)
	return sc.ks
}

// grow resizes xs to n, reallocating only when its capacity is short,
// with an eighth more room (as growKeep and the policy package's grow):
// the buffers sized by the job count were made to the count of the
// first call, and a count that crept up past it regrew them (twice
// ~4.5 MB a call for srtf-oracle's change-ranked merge at 100,000 jobs,
// ~1,200–1,700 fresh pages in the decision, ~2 ms). Its contents are
// not kept: callers set every element.
func grow[T any](xs []T, n int) []T {
	if cap(xs) < n {
		return make([]T, n, n+n/8)
	}
	return xs[:n]
}

// sortKeyed orders by queue, then the keys, then submit order. NaN keys
// (bad input) rank last instead of breaking the sort.
//
// A decision ranks ~12,000 jobs and a comparison sort of 48-byte records
// dominated it, so this is a stable LSD radix sort of indices on
// (queue, k[0], k[1], k[2]) mapped to order-preserving integers, followed
// by a comparison sort of each run of equal keys by submit time and ID.
// The order is exactly compareKeyed's.
func sortKeyed(ks []keyed) []policy.Ranked {
	var sc scratch
	return sc.sort(ks)
}

// sort is sortKeyed into reused storage.
func (sc *scratch) sort(ks []keyed) []policy.Ranked {
	return sc.ranked(ks, sc.order(ks))
}

// order is the indexes of ks in sortKeyed's order.
func (sc *scratch) order(ks []keyed) []int32 {
	sc.idx = grow(sc.idx, len(ks))
	idx := sc.idx
	for i := range idx {
		idx[i] = int32(i)
	}
	if inOrder(ks) { // FIFO over a snapshot listed in arrival order
		return idx
	}
	r := sc.rad.reset(len(ks))
	w := workers(len(ks))
	var differ [4]uint64
	if w > 1 {
		differ = r.fieldsPar(ks, w)
	} else {
		differ = r.fields(ks)
	}
	cut := sc.coarse - 1 // the field whose low bits are left to comparisons
	if cut >= 0 && differ[cut]>>sc.coarseBits == 0 {
		cut = -1 // they are all it has that varies: sort it in full
	}
	// mask: the bits the passes sort by, per field; least significant
	// field first: k[2], k[1], k[0], queue
	var mask [4]uint64
	last := -1 // the last field sorted: r.keys holds it in idx's order
	for _, f := range [...]int{2, 1, 0, 3} {
		if cut >= 0 && f != 3 && f > cut {
			continue // below the cut: comparisons only
		}
		mask[f] = differ[f]
		if f == cut {
			mask[f] &^= 1<<sc.coarseBits - 1
		}
		switch {
		case mask[f] == 0:
			continue
		case w > 1:
			idx = r.sortPar(idx, f, mask[f], w)
		default:
			idx = r.sort(idx, f, mask[f])
		}
		last = f
	}
	if w > 1 {
		r.sortRunsPar(ks, idx, mask, last, w)
	} else {
		r.sortRuns(ks, idx, mask, last)
	}
	sc.idx = idx
	return idx
}

// sortRuns orders each run of keys that the radix passes left equal
// (equal in every bit of mask) by compareAt, the full order: the other
// keys, submit time, ID, then index. After full passes only true ties
// remain (the FIFO tie-break); after coarse ones, keys that share the
// bits sorted so far. Runs are found on the fields' integers.
func (r *radix) sortRuns(ks []keyed, idx []int32, mask [4]uint64, last int) {
	r.sortRunsIn(ks, idx, r.runs(mask, last, len(idx)), &r.recs[0])
}

// Sorter ranks jobs by a key of the caller's, lowest first, then submit
// time and ID, stably: the orderings' radix sort, for plug-ins with an
// order of their own (Optimus' admission cost). NaN keys rank last. It
// keeps its buffers between calls; the result is valid until the next.
type Sorter struct{ sc scratch }

// Sort returns the indexes of jobs in order of keys[i].
func (s *Sorter) Sort(jobs []*policy.Job, keys []float64) []int32 {
	ks := s.sc.keys(len(jobs))
	for i, j := range jobs {
		ks[i] = keyed{job: j, k: [3]float64{keys[i]}}
	}
	return s.sc.order(ks)
}

// asListed ranks the active jobs of js in the order given, all in queue
// 0: one pass, as it runs over the whole queue on every decision.
func (sc *scratch) asListed(js []*policy.Job) []policy.Ranked {
	out := sc.out[:0]
	sc.atValid = false
	for _, j := range js {
		if isActive(j) {
			out = append(out, policy.Ranked{Job: j})
		}
	}
	sc.out = out
	return out
}

// listedAll ranks every job of js in the order given, finished ones
// included, in queue 0. The last call's ranking is kept: its prefix that
// still lists the same jobs (pointer compares, no job is read) stays, and
// only the rest is appended. A nil job falls back to asListed.
func (sc *scratch) listedAll(js []*policy.Job) []policy.Ranked {
	sc.atValid = false
	out, n := sc.out, 0
	if len(out) > len(js) {
		out = out[:len(js)]
	}
	for n < len(out) && out[n].Job == js[n] {
		n++
	}
	out = out[:n]
	for _, j := range js[n:] {
		if j == nil {
			return sc.asListed(js)
		}
		out = append(out, policy.Ranked{Job: j})
	}
	sc.out = out
	return out
}

// ranked lists ks in the order idx.
func (sc *scratch) ranked(ks []keyed, idx []int32) []policy.Ranked {
	out := grow(sc.out, len(ks))
	sc.out, sc.atValid = out, sc.kc.on
	var at []int32
	if sc.atValid {
		// a tracked snapshot: the Framework asks where each job is
		// listed (RankIndexes), written in the same pass (each ks[x] is
		// a miss)
		at = grow(sc.at, len(idx))
		sc.at = at
	}
	if sc.lazy && sc.atValid {
		sc.rankedLazy(ks, idx, out, at)
		return out
	}
	// each part writes its own ranks: split for every ordering (lucid's
	// ~121,000 ranks took ~1.5 ms serially, ~0.8 ms split on 2 cores)
	if w := workers(len(idx)); w > 1 {
		forRanges(len(idx), w, func(_, lo, hi int) { rankRange(ks, idx, out, at, lo, hi) })
	} else {
		rankRange(ks, idx, out, at, 0, len(idx))
	}
	return out
}

// rankedLazy is ranked leaving the jobs out: the keys' positions and
// queues are copied in key order (in sequence), then read in rank order.
func (sc *scratch) rankedLazy(ks []keyed, idx []int32, out []policy.Ranked, at []int32) {
	pq := grow(sc.pq, len(ks))
	sc.pq = pq
	forRanges(len(ks), workers(len(ks)), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			pq[i] = posQueue{at: ks[i].at, queue: ks[i].queue}
		}
	})
	forRanges(len(idx), workers(len(idx)), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			x := pq[idx[i]]
			out[i], at[i] = policy.Ranked{Queue: int(x.queue)}, x.at
		}
	})
}

// rankRange writes out[lo:hi] (and at's, unless nil) from ks in the
// order idx.
func rankRange(ks []keyed, idx []int32, out []policy.Ranked, at []int32, lo, hi int) {
	if at == nil {
		for i := lo; i < hi; i++ {
			k := &ks[idx[i]]
			out[i] = policy.Ranked{Job: k.job, Queue: int(k.queue)}
		}
		return
	}
	for i := lo; i < hi; i++ {
		k := &ks[idx[i]]
		out[i], at[i] = policy.Ranked{Job: k.job, Queue: int(k.queue)}, k.at
	}
}

// inOrder reports whether ks already is in sortKeyed's order, which one
// linear pass settles: then the radix passes are skipped.
func inOrder(ks []keyed) bool {
	for i := 1; i < len(ks); i++ {
		if compareKeyed(&ks[i-1], &ks[i]) > 0 {
			return false
		}
	}
	return true
}

// compareKeyed is sortKeyed's order as a three-way comparison.
func compareKeyed(a, b *keyed) int {
	if a.queue != b.queue {
		return cmpInt(int(a.queue), int(b.queue))
	}
	for k := range a.k {
		if x, y := floatKey(a.k[k]), floatKey(b.k[k]); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return compareSubmit(a.job, b.job)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// floatKey maps a float64 to a uint64 with the same order, so that radix
// sorting the integers sorts the floats. -0 and +0 map alike (they compare
// equal); NaN maps to +Inf's key.
func floatKey(v float64) uint64 {
	if v != v {
		v = math.Inf(1)
	}
	if v == 0 {
		v = 0 // -0 → +0
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b // negative: larger magnitude sorts first
	}
	return b | 1<<63
}

// compareSubmit is the FIFO tie-break every ordering ends with, so equal
// keys always rank the same way: Submit (submitOrder), then ID.
func compareSubmit(a, b *policy.Job) int {
	if c := submitOrder(a.Submit, b.Submit); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// submitOrder compares two Submits (0: tied). A NaN Submit (bad input)
// sorts after every number and ties with another NaN, so the order stays
// transitive: while a NaN tied with every Submit, an incremental re-rank
// could keep an order no full sort gives.
func submitOrder(x, y float64) int {
	switch xn, yn := x != x, y != y; {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	case x < y:
		return -1
	case y < x:
		return 1
	}
	return 0
}

// radix is a stable least-significant-digit radix sort of indices by
// sortKeyed's fields, 11 bits per pass. Only fields, and digits of them,
// that differ between keys get a pass, so a constant field costs nothing
// and a narrow one (a state flag, a queue) one pass. The fields are
// mapped to integers once, in key order, so later fields' passes and the
// tie runs gather 8-byte integers rather than 40-byte keys and their
// conversions; every digit's histogram is counted in the pass that
// gathers the keys.
type radix struct {
	// field holds each field's order-preserving integers by key index:
	// k[0], k[1], k[2], then the queue (most significant last)
	field       [4][]uint64
	keys, keys2 []uint64
	idx2        []int32
	// cnt: the workers' digit counts of sortPar, made on first use
	cnt *parCounts
	// recs: each worker's tie run being sorted (sortRunsIn)
	recs [maxWorkers][]runRec
}

// reset sizes r's buffers for n keys, keeping their storage when it suffices.
func (r *radix) reset(n int) *radix {
	for f := range r.field {
		r.field[f] = grow(r.field[f], n)
	}
	r.keys, r.keys2, r.idx2 = grow(r.keys, n), grow(r.keys2, n), grow(r.idx2, n)
	return r
}

// fields maps every field of ks to its integers (r.field, in the order
// sortKeyed compares them: k[0], k[1], k[2], queue) in one pass, and
// returns each field's bits that are not the same in every key.
func (r *radix) fields(ks []keyed) (differ [4]uint64) {
	f0, f1, f2, fq := r.field[0][:len(ks)], r.field[1][:len(ks)], r.field[2][:len(ks)], r.field[3][:len(ks)]
	var and, or [4]uint64
	and = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	for i := range ks {
		k := &ks[i]
		a, b, c, q := floatKey(k.k[0]), floatKey(k.k[1]), floatKey(k.k[2]), uint64(k.queue)^1<<63
		f0[i], f1[i], f2[i], fq[i] = a, b, c, q
		and[0], and[1], and[2], and[3] = and[0]&a, and[1]&b, and[2]&c, and[3]&q
		or[0], or[1], or[2], or[3] = or[0]|a, or[1]|b, or[2]|c, or[3]|q
	}
	for f := range differ {
		differ[f] = and[f] ^ or[f]
	}
	return differ
}

// sort reorders idx stably by r.field[f][idx[i]], on the bits of
// differ (those that vary, or the ones asked for); it returns the sorted
// indexes, in idx or in r's second buffer (whichever the last pass
// wrote).
func (r *radix) sort(idx []int32, f int, differ uint64) []int32 {
	n := len(idx)
	keys, key := r.keys[:n], r.field[f]
	lo := bits.TrailingZeros64(differ)
	if span := 64 - bits.LeadingZeros64(differ) - lo; span <= maxDigit {
		// one pass over a narrow digit (a state flag, a small queue)
		for i, x := range idx {
			keys[i] = key[x]
		}
		return r.pass(idx, keys, uint(lo), span)
	}
	var count [6][1 << maxDigit]int32 // every digit's histogram, in the pass that gathers the keys
	const m = 1<<maxDigit - 1
	for i, x := range idx {
		k := key[x]
		keys[i] = k
		count[0][k&m]++
		count[1][(k>>11)&m]++
		count[2][(k>>22)&m]++
		count[3][(k>>33)&m]++
		count[4][(k>>44)&m]++
		count[5][(k>>55)&m]++
	}
	for d := 0; d < 6; d++ {
		if (differ>>(11*d))&m != 0 {
			idx, keys = r.scatter(idx, keys, uint(11*d), m, count[d][:])
		}
	}
	return idx
}

// maxDigit is the widest digit a narrow field is sorted by in one pass.
const maxDigit = 11

// pass is one stable counting-sort pass on the width bits of keys at bit
// shift.
func (r *radix) pass(idx []int32, keys []uint64, shift uint, width int) []int32 {
	var count [1 << maxDigit]int32
	mask := uint64(1)<<width - 1
	for _, k := range keys {
		count[(k>>shift)&mask]++
	}
	idx, _ = r.scatter(idx, keys, shift, mask, count[:mask+1])
	return idx
}

// scatter is a stable counting-sort pass on the digit (k>>shift)&mask,
// whose histogram is cnt (it becomes the running offsets); it returns
// the indexes and keys in their new order, in r's other buffers, and
// keeps the buffers it read from for the next pass.
func (r *radix) scatter(idx []int32, keys []uint64, shift uint, mask uint64, cnt []int32) ([]int32, []uint64) {
	sum := int32(0)
	for d, c := range cnt {
		cnt[d], sum = sum, sum+c
	}
	out, oidx := r.keys2[:len(keys)], r.idx2[:len(keys)]
	for i, k := range keys {
		d := (k >> shift) & mask
		p := cnt[d]
		oidx[p], out[p] = idx[i], k
		cnt[d] = p + 1
	}
	r.keys2, r.keys = keys[:cap(keys)], out[:cap(out)]
	r.idx2 = idx[:cap(idx)]
	return oidx, out
}

// gpuShare is a job's total GPU demand, treating Fraction 0 as 1.
func gpuShare(j *policy.Job) float64 {
	f := j.Fraction
	if f <= 0 {
		f = 1
	}
	return float64(j.Workers) * f
}

// horizon is a GuardUntil bound d seconds after now, a millisecond early:
// far more than the rounding of the sums that decide the guard, so the
// answer cannot flip before it.
func horizon(now, d policy.Seconds) policy.Seconds { return now + d - 1e-3 }
