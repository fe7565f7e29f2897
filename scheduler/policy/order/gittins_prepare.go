package order

import "github.com/caravan-dl/caravan/scheduler/policy"

// Prepare re-ranks, between decisions, the last tracked call's jobs under
// the samples learnt since, and reports whether it did
// (policy.OrderPreparer). A learnt sample moves the index of every job
// whose service is below it: the never-run queued jobs (a run, keyRun)
// and the jobs that ran before, ~19,000 queued ones at 10k × 100k, whose
// re-sort cost the next decision ~1.5 ms. Each job's index is computed
// here at the service the last call saw, from its position's record
// (gittins_pos.go), and the record kept, so the next call reuses it
// where the service holds and computes it afresh where it moved, as it
// would have; the keys are re-sorted from the last order. No decision
// changes.
//
// It does nothing after an untracked call or when nothing was learnt.
func (o *Gittins) Prepare() bool {
	if o.dist.Added() == o.lastVer {
		return false
	}
	if o.cr.fast {
		return o.prepareByChanges()
	}
	if !o.atValid {
		return false
	}
	ks := o.sc.lastKeys()
	if ks == nil {
		return false
	}
	x := indexPass{ks: ks, newMax: o.dist.MaxAddedSince(o.lastVer), fresh: o.Index(0)}
	o.keyIndexes(&x, o.reindexAt)
	o.lastVer = o.dist.Added()
	o.sc.setRun(keyed{queue: int32(o.q.queueOf(0)), k: [3]float64{stateTie(&policy.Job{State: policy.Queued}), -x.fresh}})
	o.sc.resortLast(ks)
	return true
}

// reindexAt is Prepare's pass over the keys x.ks[lo:hi]: a job that had
// not run takes the new index at 0; a queued one whose service (as its
// position's record has it) is below a sample learnt since takes its
// index there afresh, into the record; a running one below it has its
// index's terms looked up there and its index voided (the next call
// computes it at its new service, from those terms where they still
// hold); the others keep theirs.
func (o *Gittins) reindexAt(x *indexPass, lo, hi int) {
	running := stateTie(&policy.Job{State: policy.Running})
	for i := lo; i < hi; i++ {
		k := &x.ks[i]
		st := &o.at[k.at-1]
		switch {
		case st.pending():
			// keyed loosely, its index not computed: computed afresh if
			// read (a record SortRunning computed is voided below)
		case st.svc == 0:
			k.k[1] = -x.fresh
		case st.svc >= x.newMax:
		case k.k[0] == running:
			// its service moves by the next call, which computes its
			// index then: the terms are looked up here (the costly part,
			// and they hold while no sample lies between), the index
			// voided
			o.spanAt[k.at-1] = o.dist.span(st.svc, o.delta)
			st.svc = voidSvc
		default:
			st.idx = o.termsIndex(st.svc, &o.spanAt[k.at-1], false)
			k.k[1] = -st.idx
		}
	}
}
