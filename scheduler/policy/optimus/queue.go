package optimus

import (
	"slices"
	"sort"

	parts "github.com/caravan-dl/caravan/internal/split"
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
)

// qrec is one queued job in admission order, with copies of what the
// admission loops read: in this order every entry read was a cache miss
// at 100,000 jobs.
type qrec struct {
	pos   int32 // the entry's index in the slab (snapshot position)
	admit bool  // allocate gave it GPUs this round
	cost  float64
	need  float64 // GPUs at its minimum gang
	id    string
	text  string // the entry's kept Waiting text, as gainText last set it
}

// queue keeps the admission order from one decision to the next.
type queue struct {
	recs, spare, fbuf []qrec
	// ok: recs is the order of the last decision; nan: some cost or
	// submit time in it was NaN, so it came from the stable sort
	ok, nan bool
	// fresh are the positions of queued entries rebuilt this decision
	fresh  []int32
	sorter order.Sorter
	jobs   []*policy.Job
	costs  []float64
	// par is queuedRecs' per-worker share
	par []queuedPart
	// stay and mparts are mergeSplit's (scratch): whether each record of
	// the last order stays, and the merge's parts
	stay   []bool
	mparts []parts.MergePart
}

// admissionOrder lists queued entries, least estimated GPU-time first,
// then by submit time and ID, keeping snapshot order on full ties: the
// order of sort.Stable(byCost). On a tracked snapshot the last order is
// kept for the unchanged jobs (their keys did not move, so neither did
// their relative order) and the rebuilt ones are merged in.
func (o *Optimus) admissionOrder(tracked bool) []qrec {
	q := &o.queue
	if tracked && q.ok && !q.nan {
		if recs, ok := o.mergeOrder(); ok {
			return recs
		}
	}
	return o.fullOrder()
}

// rec is the admission record of the queued entry at pos, and whether
// its cost or submit time is NaN.
func (o *Optimus) rec(pos int32) (qrec, bool) {
	e := &o.buf.slab[pos]
	c := e.est.remaining(e.lo) * float64(e.lo) * e.frac
	return qrec{pos: pos, cost: c, need: float64(e.lo) * e.frac, id: e.id, text: e.text},
		c != c || e.job.Submit != e.job.Submit
}

// fullOrder sorts every queued entry: by the orderings' radix sort on
// the costs, or, where a key is NaN (which breaks any comparison order),
// by the stable sort whose result defines it.
func (o *Optimus) fullOrder() []qrec {
	q := &o.queue
	recs, nan := o.queuedRecs()
	if nan {
		sort.Stable(byCost{o, recs})
		q.spare, q.recs, q.ok, q.nan = q.recs, recs, true, true
		return recs
	}
	pos := q.sorter.Sort(q.jobs, q.costs)
	sorted := slices.Grow(q.fbuf[:0], len(recs))
	for _, p := range pos {
		sorted = append(sorted, recs[p])
	}
	q.fbuf, q.spare, q.recs, q.ok, q.nan = recs, q.recs, sorted, true, false
	return sorted
}

// mergeOrder is the last order without the jobs that changed, merged
// with the rebuilt queued entries (sorted among themselves); false if
// one of those has a NaN key.
func (o *Optimus) mergeOrder() ([]qrec, bool) {
	q := &o.queue
	fresh := q.fbuf[:0]
	for _, pos := range q.fresh {
		r, bad := o.rec(pos)
		if bad {
			q.fbuf = fresh
			return nil, false
		}
		fresh = append(fresh, r)
	}
	slices.SortFunc(fresh, func(a, b qrec) int {
		if o.before(&a, &b) {
			return -1
		}
		return 1 // distinct positions never tie
	})
	if w := parWorkers(); w > 1 && len(q.recs) >= parMin {
		merged := o.mergeSplit(fresh, w)
		q.fbuf, q.spare, q.recs = fresh, q.recs, merged
		return merged, true
	}
	merged := slices.Grow(q.spare[:0], len(q.recs)+len(fresh))
	f := 0
	for _, r := range q.recs {
		if int(r.pos) >= len(o.buf.slab) || !o.track.Same(int(r.pos)) {
			continue // changed: among the fresh ones if still queued
		}
		for f < len(fresh) && o.before(&fresh[f], &r) {
			merged = append(merged, fresh[f])
			f++
		}
		r.admit = false
		merged = append(merged, r)
	}
	merged = append(merged, fresh[f:]...)
	q.fbuf, q.spare, q.recs = fresh, q.recs, merged
	return merged, true
}

// before is the admission order: cost, then submit time, ID and
// snapshot position (the stable sort's input order).
func (o *Optimus) before(a, b *qrec) bool {
	if a.cost != b.cost {
		return a.cost < b.cost
	}
	ja, jb := o.buf.slab[a.pos].job, o.buf.slab[b.pos].job
	if ja.Submit != jb.Submit {
		return ja.Submit < jb.Submit
	}
	if a.id != b.id {
		return a.id < b.id
	}
	return a.pos < b.pos
}

// byCost sorts records by cost, then submit time and ID.
type byCost struct {
	o    *Optimus
	recs []qrec
}

func (q byCost) Len() int           { return len(q.recs) }
func (q byCost) Swap(a, b int)      { q.recs[a], q.recs[b] = q.recs[b], q.recs[a] }
func (q byCost) Less(a, b int) bool { return q.o.beforeCost(&q.recs[a], &q.recs[b]) }

// beforeCost is before without the position (the stable sort keeps
// input order on full ties).
func (o *Optimus) beforeCost(a, b *qrec) bool {
	if a.cost != b.cost {
		return a.cost < b.cost
	}
	ja, jb := o.buf.slab[a.pos].job, o.buf.slab[b.pos].job
	if ja.Submit != jb.Submit {
		return ja.Submit < jb.Submit
	}
	return a.id < b.id
}
