package order

import "sync/atomic"

// An ordering whose keys all move between calls (fair's ρ moves with
// Now, lucid's estimates with its model) sorts in full every call: at
// 100,000 jobs three or four radix passes, ~4 ms on 2 cores. Where its
// calls are close together (the live scheduler decides 200 ms after an
// event) the keys barely move, and the last call's order is nearly this
// one's: each job crossed a few neighbours at most. sortNear starts from
// that order and sorts by insertion, which costs a pass where few keys
// crossed and gives up, past a budget of moves, where many did (calls
// 10 s apart); a failure backs off for a few calls. The result is the
// same: compareAt is a total order (position breaks every tie), so
// there is one sorted order, which both sorts find.

// nearSortOff turns the near sort off (tests compare orders with and
// without it).
var nearSortOff bool

// nearSorts counts the near sorts that kept within their budget (for
// tests).
var nearSorts atomic.Int64

// maxNearBackoff bounds the calls a failed near sort skips.
const maxNearBackoff = 16

// nearSort is the state sortNear keeps between calls.
type nearSort struct {
	// bufs alternate as the result: the last call's order (in.order)
	// may be one of them, and is read while the other is written
	bufs [2][]int32
	// cur maps the last call's indexes to this call's; fresh lists the
	// jobs new since it
	cur, fresh, merged []int32
	// window is insertParts' scratch for the merges at part boundaries
	window []int32
	// items is seq with each job's queue and first key's integer
	// beside it (gather)
	items []nearItem
	// skip counts the calls left to skip after a failure, backoff the
	// skip the next failure sets
	skip, backoff int
}

// sortNear orders ks (prev: each one's index in the last call's keys, -1
// for a new job) from the last call's order, the jobs still listed
// sorted by insertion and the new ones merged in; false where the last
// order is not there to start from or too many keys crossed.
func (sc *scratch) sortNear(ks []keyed, prev []int32) ([]int32, bool) {
	in, ns := &sc.inc, &sc.near
	if nearSortOff || prev == nil || len(in.order) != len(in.keys) || len(in.keys) == 0 {
		return nil, false
	}
	if ns.skip > 0 {
		ns.skip--
		return nil, false
	}
	seq := ns.buffer(in.order)[:0]
	ns.cur = grow(ns.cur, len(in.keys))
	for i := range ns.cur {
		ns.cur[i] = -1
	}
	fresh := ns.fresh[:0]
	for i, p := range prev {
		if p < 0 || int(p) >= len(ns.cur) {
			fresh = append(fresh, int32(i))
			continue
		}
		ns.cur[p] = int32(i)
	}
	ns.fresh = fresh
	for _, last := range in.order {
		if c := ns.cur[last]; c >= 0 {
			seq = append(seq, c)
		}
	}
	if len(seq)+len(fresh) != len(ks) { // a match that is not one to one
		return nil, false
	}
	if !ns.insertParts(ks, seq) {
		ns.fail()
		return nil, false
	}
	ns.backoff = 0
	nearSorts.Add(1)
	if len(fresh) == 0 {
		return seq, true
	}
	sortNearly(ks, fresh)
	ns.merged = mergeSorted(ks, seq, fresh, ns.merged)
	return ns.merged, true
}

// buffer is the result buffer that does not hold last, the last call's
// order.
func (ns *nearSort) buffer(last []int32) []int32 {
	k := 0
	if b := ns.bufs[0]; cap(b) > 0 && cap(last) > 0 && &b[:1][0] == &last[:1][0] {
		k = 1
	}
	ns.bufs[k] = grow(ns.bufs[k], len(last))
	return ns.bufs[k]
}

// fail backs the near sort off: 1, 2, 4 ... maxNearBackoff calls.
func (ns *nearSort) fail() {
	ns.backoff = min(max(1, 2*ns.backoff), maxNearBackoff)
	ns.skip = ns.backoff
}

// insertParts sorts seq (indexes of ks) by insertion in parts side by
// side (parallel.go), each within a budget of moves, then merges each
// part into the sorted ones before it where they overlap: nearly sorted,
// a part's head and the prefix's tail overlap by a few jobs. false where
// a part ran out of moves.
func (ns *nearSort) insertParts(ks []keyed, seq []int32) bool {
	items := grow(ns.items, len(seq))
	ns.items = items
	w := workers(len(seq))
	if w <= 1 {
		return insertRange(ks, seq, items)
	}
	var ok [maxWorkers]bool
	forRanges(len(seq), w, func(k, lo, hi int) { ok[k] = insertRange(ks, seq[lo:hi], items[lo:hi]) })
	for k := range w {
		if !ok[k] {
			return false
		}
	}
	for k := 1; k < w; k++ {
		mid, hi := rangeOf(k, w, len(seq))
		ns.join(ks, seq[:hi], mid)
	}
	return true
}

// nearItem is one job of the near sort's sequence with its queue and
// first key's integer (floatKey) beside its index: the insertion walks
// the last ranking, which reads the keys at random, so each part first
// gathers what most comparisons need into 16 bytes in sequence, and
// compares those inline (keys equal in both are compared in full).
type nearItem struct {
	f    uint64
	q, i int32
}

// insertRange sorts seq by insertion on items (its gathered keys,
// len(seq)) and writes the order back to seq; false past the budget of
// moves (seq is then unchanged).
func insertRange(ks []keyed, seq []int32, items []nearItem) bool {
	gather(ks, seq, items)
	if !insertItems(ks, items) {
		return false
	}
	for p := range items {
		seq[p] = items[p].i
	}
	return true
}

// insertItems is insertNearly on items in compareAt order, its
// comparisons inline: the same budget, the same result.
func insertItems(ks []keyed, xs []nearItem) bool {
	budget := 4*len(xs) + 16
	for i := 1; i < len(xs); i++ {
		x, j := xs[i], i
		for j > 0 {
			if c := itemCmp(&xs[j-1], &x); c < 0 || c == 0 && compareAt(ks, xs[j-1].i, x.i) <= 0 {
				break
			}
			xs[j] = xs[j-1]
			j--
			if budget--; budget == 0 {
				xs[j] = x
				return false
			}
		}
		if j != i {
			xs[j] = x
		}
	}
	return true
}

// itemAfter reports that a ranks after b (compareAt(a, b) > 0).
func itemAfter(ks []keyed, a, b *nearItem) bool {
	c := itemCmp(a, b)
	return c > 0 || c == 0 && compareAt(ks, a.i, b.i) > 0
}

// itemCmp orders a and b by queue and first key: 1 where a ranks after,
// -1 before, 0 where both tie. It inlines (itemAfter, with its call,
// does not), so the insertion calls out only on a tie: a call a
// comparison was ~0.4 ms of CPU a decision at 122,000 jobs.
func itemCmp(a, b *nearItem) int {
	switch {
	case a.q != b.q:
		return cmpInt(int(a.q), int(b.q))
	case a.f != b.f:
		if a.f > b.f {
			return 1
		}
		return -1
	}
	return 0
}

// join sorts s, whose parts s[:mid] and s[mid:] are sorted, by merging
// only where they overlap: the tail of the first part ordered after the
// second's head, and the head of the second ordered before the first's
// tail.
func (ns *nearSort) join(ks []keyed, s []int32, mid int) {
	if mid == 0 || mid == len(s) {
		return
	}
	lo := mid
	for lo > 0 && compareAt(ks, s[lo-1], s[mid]) > 0 {
		lo--
	}
	hi := mid
	for hi < len(s) && compareAt(ks, s[hi], s[mid-1]) < 0 {
		hi++
	}
	if lo == mid { // already in order
		return
	}
	ns.window = append(ns.window[:0], s[lo:mid]...)
	mergeInto(ks, ns.window, s[mid:hi], s[lo:hi])
}
