package order

import "slices"

// A call lists its moved jobs (markMove) in their last rank order,
// rather than sorting them from position order, where they are at least
// nearlyMin and a nearlyShare-th of the last ranking: that pass reads
// every last rank (~1.3 ms at 120,000 jobs), more than sorting ~3,000
// moved jobs cost (tests change both).
var nearlyMin, nearlyShare = 1024, 16

// keptOff turns the kept order (movedOrd) off, so that tests reach the
// last ranking's pass too.
var keptOff bool

// sortAdds sorts the entries changes lists, in position order, by
// compare. Most of them are moved jobs: SRTF's running jobs, every
// call (~22,000 at 10,000 nodes of whole-GPU gangs), whose remaining
// times all fall at the same rate, so their order among themselves
// holds from the last call. Sorted from position order they took
// ~7 ms of CPU a call on one core; taken in their last order they are
// nearly sorted, and insertion orders them in about one comparison
// each. The others (changed jobs, a few hundred) are sorted and merged
// in. compare is a total order, so the result is the full sort's
// whatever path it takes.
//
// The last order is the accruing jobs' positions as the last call
// sorted its entries (movedOrd): a pass over the moved jobs alone. Where
// it is not kept (the first call, a call that listed none), it is read
// from the last ranking, a pass over every ranked job (~1.3 ms at
// 120,000 jobs), taken only where the moved jobs are a nearlyShare-th of
// it: otherwise sorting them costs less (a live round 0.2 s apart moves
// ~5,700 of SRTF's 122,000 and sorted them, ~1.1 ms of CPU).
func (t *changeRanks) sortAdds(listed int, adds []addEntry) []addEntry {
	cmp := func(a, b addEntry) int { return t.compare(&a.rankEntry, &b.rankEntry) }
	moved := 0
	for i := range adds {
		if adds[i].moved {
			moved++
		}
	}
	adds = t.sortMoved(adds, moved, listed, cmp)
	t.keepMoved(adds)
	return adds
}

// sortMoved is sortAdds' sort of adds, of which moved are moved jobs,
// among n positions.
func (t *changeRanks) sortMoved(adds []addEntry, moved, n int, cmp func(a, b addEntry) int) []addEntry {
	var byRank, fresh []addEntry
	switch {
	case moved < nearlyMin:
	case len(t.movedOrd) > 0 && !keptOff:
		byRank, fresh = t.inOrder(n, adds, t.movedOrd)
		t.kept++
	case moved*nearlyShare >= len(t.ord):
		byRank, fresh = t.inOrder(n, adds, t.lastMoved(n))
	}
	if byRank == nil {
		slices.SortFunc(adds, cmp)
		return adds
	}
	if insertNearly(byRank, cmp) {
		t.nearly++
	} else {
		slices.SortFunc(byRank, cmp)
	}
	slices.SortFunc(fresh, cmp)
	return mergeAdds(adds[:0], byRank, fresh, cmp)
}

// keepMoved keeps the positions of the accruing jobs among the sorted
// adds, in their order: the next call's moved jobs, mostly.
func (t *changeRanks) keepMoved(adds []addEntry) {
	t.movedOrd = t.movedOrd[:0]
	for i := range adds {
		if p := adds[i].pos; t.accr[p] {
			t.movedOrd = append(t.movedOrd, p)
		}
	}
}

// inOrder splits adds into the moved jobs, in the order of the
// positions order lists (keepMoved's, or lastMoved's), and the others in
// position order, moved jobs order does not list among them: copies in
// buffers of t's, so adds may be overwritten.
func (t *changeRanks) inOrder(n int, adds []addEntry, order []int32) (byRank, fresh []addEntry) {
	t.slot = growKeep(t.slot, n)
	for i := range adds {
		if adds[i].moved {
			t.slot[adds[i].pos] = int32(i)
		}
	}
	byRank = t.byRank[:0]
	for _, p := range order {
		// a listed position moved this call is the same job (its stamp
		// held); slot −1: taken already
		if int(p) < n && t.mark[p] == markMove && t.slot[p] >= 0 {
			byRank = append(byRank, adds[t.slot[p]])
			t.slot[p] = -1
		}
	}
	fresh = t.fresh[:0]
	for i := range adds {
		if !adds[i].moved || t.slot[adds[i].pos] >= 0 {
			fresh = append(fresh, adds[i])
		}
	}
	t.byRank, t.fresh = byRank, fresh
	return byRank, fresh
}

// lastMoved lists the positions of this call's moved jobs in the last
// call's rank order (t.ord), in movedOrd's storage (keepMoved rewrites
// it after the sort).
func (t *changeRanks) lastMoved(n int) []int32 {
	order := t.movedOrd[:0]
	for _, e := range t.ord {
		if int(e.pos) < n && t.mark[e.pos] == markMove {
			order = append(order, e.pos)
		}
	}
	t.movedOrd = order
	return order
}

// mergeAdds appends to out the sorted a and b merged.
func mergeAdds(out, a, b []addEntry, cmp func(a, b addEntry) int) []addEntry {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	return append(append(out, a[i:]...), b[j:]...)
}
