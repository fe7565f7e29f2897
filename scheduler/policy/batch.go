package policy

import "slices"

// batchFrom places a window of up to n admissible queued jobs starting at
// rank i in the order the batch placer prefers (Liquid's batch mode), then
// gives the ones that did not fit the usual preemption chance in rank
// order. It returns the last rank index it consumed.
func (r *round) batchFrom(i, n int) int {
	bp := r.f.Place.(BatchPlacer)
	w := &r.window // reused: a decision has a window per n queued jobs
	idx, jobs, dems := w.idx[:0], w.jobs[:0], w.dems[:0]
	defer func() { w.idx, w.jobs, w.dems = idx, jobs, dems }()
	last := i
	for k := i; k < len(r.ranked) && len(idx) < n; k++ {
		last = k
		j := r.job(k)
		if j.State != Queued {
			continue
		}
		d, ok := r.admissible(k)
		if !ok {
			continue
		}
		idx, jobs, dems = append(idx, k), append(jobs, j), append(dems, d)
	}
	w.placed = slices.Grow(w.placed[:0], len(idx))[:len(idx)]
	placed := w.placed
	clear(placed)
	for _, b := range bp.PackOrder(jobs, dems) {
		if r.spent() {
			break
		}
		if b < 0 || b >= len(idx) || placed[b] {
			continue
		}
		m := r.memo(r.f.Place.Shape(jobs[b], dems[b]))
		if p, fail := r.place(jobs[b], dems[b], m); fail == nil {
			placed[b] = true
			r.dec.Starts = append(r.dec.Starts, Start{JobID: jobs[b].ID, Placement: p})
		}
	}
	for b := range idx {
		switch {
		case placed[b]:
		case r.spent(): // past the budget: waits as the ranks after the window do
			r.waitBudget(idx[b])
		default:
			r.admit(idx[b], dems[b])
		}
	}
	return last
}

// batchWindow is batchFrom's scratch space.
type batchWindow struct {
	idx    []int
	jobs   []*Job
	dems   []Demand
	placed []bool
}
