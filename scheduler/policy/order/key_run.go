package order

import "math"

// keyRun sorts apart the jobs that share one key prefix (queue, k[0],
// k[1]), as 2D-Gittins' never-run jobs do: all of them carry the index
// at zero service. Every learned sample moves that index, so each of
// them changes its key and the re-rank gives way to a full sort of every
// job, 140,000 at scale; yet their order among themselves (queue-join
// time, submit time, ID, position) does not move. keyRun keeps that
// order from the last full sort, drops the jobs that left the run,
// merges in those that joined it, radix-sorts only the other jobs and
// splices the run in where its prefix ranks. The result is sortKeyed's
// order exactly.
type keyRun struct {
	// on: the ordering set prefix for this call
	on bool
	// prefix is this call's shared prefix, last the one of the last call
	// whose run order keeps (k[2] and job unused)
	prefix, last keyed
	// valid: order lists the run of the last call's keys (sc.inc.keys)
	// in rank order
	valid bool
	order []int32
	// buffers: kept[p] is 1 + this call's index of the last call's run
	// member p, or 0; the kept and joined members, the others, and the
	// run and full order written
	kept, keptOrder, joined, rest, merged, out []int32
	// sorted, sorted2: the others and a large joined set, radix-sorted
	sorted, sorted2 []int32
	// reused counts the calls that kept the last order (for tests)
	reused int
	// small counts down the full sorts left out after a run of under an
	// eighth of the jobs: splitting costs a pass and a copy of the
	// others, which a small run does not repay
	small int
}

// runRetry is how many full sorts a small run leaves out before the run
// is tried again.
const runRetry = 16

// runMin is the fewest jobs for which the run is sorted apart (tests
// lower it).
var runMin = 1024

// setRun makes this call's full sort keep apart the jobs whose key
// starts with prefix (keyRun).
func (sc *scratch) setRun(prefix keyed) {
	if sc.run == nil {
		sc.run = &keyRun{}
	}
	sc.run.on, sc.run.prefix = true, prefix
}

// samePrefix reports whether a and b share queue, k[0] and k[1], bit for
// bit (the run's members are exactly those keys, so no other job ties
// with them on the prefix).
func samePrefix(a, b *keyed) bool {
	return a.queue == b.queue && math.Float64bits(a.k[0]) == math.Float64bits(b.k[0]) &&
		math.Float64bits(a.k[1]) == math.Float64bits(b.k[1])
}

// comparePrefix is compareKeyed on queue, k[0] and k[1] only.
func comparePrefix(a, b *keyed) int {
	if a.queue != b.queue {
		return cmpInt(int(a.queue), int(b.queue))
	}
	for k := range 2 {
		if x, y := floatKey(a.k[k]), floatKey(b.k[k]); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// useRun reports whether this full sort splits off the run; the run
// is this call's only (the ordering sets it before every sort).
func (sc *scratch) useRun(n int) bool {
	r := sc.run
	if r == nil {
		return false
	}
	use := r.on && n >= runMin
	if use && r.small > 0 {
		r.small--
		use = false
	}
	r.on = false
	if !use {
		r.valid = false
	}
	return use
}

// forgetRun drops the run's order: this call was not sorted by it, so
// the next call's match no longer refers to it.
func (sc *scratch) forgetRun() {
	if sc.run != nil {
		sc.run.on, sc.run.valid = false, false
	}
}

// orderRun is order(ks) by way of the run (keyRun). prev matches ks
// with the last call's keys (sc.inc.keys), or is nil.
func (sc *scratch) orderRun(ks []keyed, prev []int32) []int32 {
	r := sc.run
	reuse := r.valid && prev != nil
	r.valid = false
	if reuse && !r.split(ks, prev, sc.inc.keys) {
		reuse = false
	}
	if !reuse {
		r.split(ks, nil, nil)
	}
	if reuse {
		r.reused++
	}
	run := r.sortedRun(sc, ks, reuse)
	r.sorted = sc.subsets().sort(ks, r.rest, r.sorted, sc.coarse, sc.coarseBits)
	rest := r.sorted
	out := splice(ks, rest, run, &r.prefix, r.out)
	r.order, r.out = append(r.order[:0], run...), out
	r.last, r.valid = r.prefix, true
	if len(run) < len(ks)/8 {
		r.small = runRetry
	}
	return out
}

// splice writes to out the sorted others with the sorted run inserted
// where its prefix ranks (no other shares it).
func splice(ks []keyed, others, run []int32, prefix *keyed, out []int32) []int32 {
	lo, hi := 0, len(others)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if comparePrefix(&ks[others[m]], prefix) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return append(append(append(out[:0], others[:lo]...), run...), others[lo:]...)
}

// split sorts ks into the others (r.rest) and the run's members: with
// last (the last call's keys, matched by prev), those that were members
// with the same k[2] are kept (r.kept, by last index), the others joined
// (r.joined). It returns false where the kept members' matches are not
// in listing order, so that their positions could break ties the other
// way than last time.
func (r *keyRun) split(ks []keyed, prev []int32, last []keyed) bool {
	rest, joined := r.rest[:0], r.joined[:0]
	if last != nil {
		r.kept = grow(r.kept, len(last))
		clear(r.kept)
	}
	lastP := int32(-1)
	for i := range ks {
		k := &ks[i]
		if !samePrefix(k, &r.prefix) {
			rest = append(rest, int32(i))
			continue
		}
		if last != nil {
			if p := prev[i]; p >= 0 && samePrefix(&last[p], &r.last) &&
				math.Float64bits(last[p].k[2]) == math.Float64bits(k.k[2]) {
				if p <= lastP {
					return false
				}
				r.kept[p], lastP = int32(i)+1, p
				continue
			}
		}
		joined = append(joined, int32(i))
	}
	r.rest, r.joined = rest, joined
	return true
}

// sortedRun is the run in rank order: the kept members in their last
// order (when reuse) merged with the joined ones, sorted.
func (r *keyRun) sortedRun(sc *scratch, ks []keyed, reuse bool) []int32 {
	joined := r.joined
	if len(joined) > runMin {
		r.sorted2 = sc.subsets().sort(ks, joined, r.sorted2, sc.coarse, sc.coarseBits)
		joined = r.sorted2
	} else {
		sortNearly(ks, joined) // listed in submit order: nearly sorted
	}
	if !reuse {
		return joined
	}
	kept := r.keptOrder[:0]
	for _, p := range r.order {
		if i := r.kept[p]; i > 0 {
			kept = append(kept, i-1)
		}
	}
	r.keptOrder = kept
	if len(joined) == 0 {
		return kept
	}
	r.merged = mergeSorted(ks, kept, joined, r.merged)
	return r.merged
}

// subSorter radix-sorts subsets of a call's keys: the run's others
// (keyRun) and the incremental re-rank's many moved jobs.
type subSorter struct {
	sc scratch
	ks []keyed // the subset's keys
}

// subsets is sc's subSorter.
func (sc *scratch) subsets() *subSorter {
	if sc.sub == nil {
		sc.sub = &subSorter{}
	}
	return sc.sub
}

// sort writes the indexes idx of ks (ascending) in sortKeyed's order to
// dst, radix-sorting a copy of their keys with the coarse passes given
// (scratch.coarse). The copy keeps their relative order, so position
// ties break alike.
func (u *subSorter) sort(ks []keyed, idx, dst []int32, coarse int, bits uint) []int32 {
	sub := grow(u.ks, len(idx))
	for c, i := range idx {
		sub[c] = ks[i]
	}
	u.ks = sub
	u.sc.coarse, u.sc.coarseBits = coarse, bits
	order := u.sc.order(sub)
	dst = grow(dst, len(order))
	for c, x := range order {
		dst[c] = idx[x]
	}
	return dst
}
