package order

// slotsPar is sortMatched's serial loops split across w workers
// (parallel.go): the last call's ranks, each kept job's slot in the last
// order, and the lists of kept (out, in that order) and moved jobs
// (changed ones in their last order, then new ones in list order),
// exactly as the serial loops make them. many: so many moved that
// sortMatched sorts in full (where the serial loop stops early).
// prev is injective (each job of the last call matches at most one of
// ks), so the workers write distinct slots.
func (in *incremental) slotsPar(ks []keyed, prev []int32, w int) (moved, out []int32, many bool) {
	n, last := len(ks), len(in.keys)
	in.slot = grow(in.slot, last)
	slot := in.slot
	if in.stale {
		in.rank = grow(in.rank, len(in.order))
		rank, order := in.rank, in.order
		forRanges(len(order), workers(len(order)), func(_, lo, hi int) {
			for r := lo; r < hi; r++ {
				rank[order[r]] = int32(r)
			}
		})
		in.stale = false
	}
	forRanges(last, workers(last), func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			slot[r] = -1
		}
	})
	var counts [maxWorkers]int
	rank, keys := in.rank, in.keys
	forRanges(n, w, func(k, lo, hi int) {
		news, c := in.news[k][:0], 0
		for i := lo; i < hi; i++ {
			switch p := prev[i]; {
			case p < 0:
				news = append(news, int32(i)) // new: after the others
			case sameKeys(&ks[i], &keys[p]):
				slot[rank[p]] = int32(i)
				continue
			default:
				slot[rank[p]] = -2 - int32(i) // changed keys
			}
			c++
		}
		in.news[k], counts[k] = news, c
	})
	total := 0
	for _, c := range counts[:w] {
		total += c
	}
	if manyMoved(total, n) {
		return nil, nil, true
	}
	moved, out = in.collect(w, total, n-total)
	return moved, out, false
}

// collect lists the slots' kept jobs (out) and changed ones, then the
// workers' new ones (moved), from the slots split across w workers.
func (in *incremental) collect(w, moves, kept int) (moved, out []int32) {
	slot := in.slot
	sw := workers(len(slot))
	var keptAt, movedAt [maxWorkers + 1]int
	forRanges(len(slot), sw, func(k, lo, hi int) {
		o, m := 0, 0
		for _, i := range slot[lo:hi] {
			switch {
			case i >= 0:
				o++
			case i <= -2:
				m++
			}
		}
		keptAt[k+1], movedAt[k+1] = o, m
	})
	for k := range sw {
		keptAt[k+1] += keptAt[k]
		movedAt[k+1] += movedAt[k]
	}
	out, moved = grow(in.out, kept), grow(in.moved, moves)
	forRanges(len(slot), sw, func(k, lo, hi int) {
		o, m := keptAt[k], movedAt[k]
		for _, i := range slot[lo:hi] {
			switch {
			case i >= 0:
				out[o] = i
				o++
			case i <= -2:
				moved[m] = -2 - i
				m++
			}
		}
	})
	m := movedAt[sw]
	for _, news := range in.news[:w] {
		m += copy(moved[m:], news)
	}
	in.out, in.moved = out, moved
	return moved, out
}
