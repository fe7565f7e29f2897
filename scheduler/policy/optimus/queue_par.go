package optimus

import (
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// queuedPart is one worker's share of queuedRecs.
type queuedPart struct {
	recs  []qrec
	jobs  []*policy.Job
	costs []float64
	nan   bool
}

// queuedRecs lists the admission record of every queued entry in o.buf.out
// (collect's order), with their jobs and costs in q.jobs and q.costs for
// the sort (left stale where some cost or submit time is NaN, which nan
// reports). Above parMin entries the records are made on workers over
// fixed ranges of out and concatenated in range order: each is a
// function of its own entry.
func (o *Optimus) queuedRecs() ([]qrec, bool) {
	q, out := &o.queue, o.buf.out
	w := parWorkers()
	if w < 2 || len(out) < parMin {
		recs := slices.Grow(q.spare[:0], len(out))
		nan := false
		for _, e := range out {
			if !e.run {
				r, bad := o.rec(int32(e.pos))
				recs = append(recs, r)
				nan = nan || bad
			}
		}
		if !nan {
			q.jobs, q.costs = slices.Grow(q.jobs[:0], len(recs)), slices.Grow(q.costs[:0], len(recs))
			for _, r := range recs {
				q.jobs = append(q.jobs, o.buf.slab[r.pos].job)
				q.costs = append(q.costs, r.cost)
			}
		}
		return recs, nan
	}
	if len(q.par) < w {
		q.par = make([]queuedPart, w)
	}
	ps := q.par[:w]
	split(len(out), w, func(r, lo, hi int) {
		p := &ps[r]
		p.recs, p.jobs, p.costs, p.nan = p.recs[:0], p.jobs[:0], p.costs[:0], false
		for _, e := range out[lo:hi] {
			if !e.run {
				r, bad := o.rec(int32(e.pos))
				p.recs = append(p.recs, r)
				p.jobs = append(p.jobs, e.job)
				p.costs = append(p.costs, r.cost)
				p.nan = p.nan || bad
			}
		}
	})
	n, nan := 0, false
	for r := range ps {
		n, nan = n+len(ps[r].recs), nan || ps[r].nan
	}
	recs := slices.Grow(q.spare[:0], n)
	q.jobs, q.costs = slices.Grow(q.jobs[:0], n), slices.Grow(q.costs[:0], n)
	for r := range ps {
		recs = append(recs, ps[r].recs...)
		q.jobs = append(q.jobs, ps[r].jobs...)
		q.costs = append(q.costs, ps[r].costs...)
	}
	return recs, nan
}
