package order

import "github.com/caravan-dl/caravan/scheduler/policy"

// A loose 2D-Gittins call (tracked, without reasons: gittins_loose.go)
// is ranked by changes (changeRanks), as 2D-LAS is. In the live regime
// at 10k × 100k only ~130 of ~122,000 keys move between two decisions,
// yet the general path keyed, indexed, matched and ranked every job
// through maps read at random (~4 ms). Kept in rank order, a call
// re-keys the jobs whose stamps moved and the running jobs that changed
// queue, and merges them back in.
//
// What a position keeps (posKey) is its job's queue, state tie and
// queue-join time, and in k[1] a queued job's service: its index is
// taken from the service where the entry is placed (gittinsFinal), so a
// sample learnt between calls moves exactly the queued jobs below it
// (Prepare re-places them, rerank). A running job's k[1] is 0: its
// index moves with its service every call, and inside its queue it is
// listed loosely (policy.RunningSorter); its queue moves with service,
// which the mover follows (until it reaches the queue's limit, the job
// is not looked at).

// changesOK reports whether a call on s is ranked by changes: a loose
// call (tracked, plain queues, without reasons, the caller sorting the
// running jobs it reads).
func (o *Gittins) changesOK(s *policy.Snapshot) bool {
	return o.q.plain() && s.JobsTracked() && s.SkipReasons && o.deferred && !o.ExactRunning
}

// orderByChanges is Order for a loose call; ok is false where it does
// not apply, the general path then ranking the call (counted here:
// see changeRanked).
func (o *Gittins) orderByChanges(s *policy.Snapshot) (out []policy.Ranked, ok bool) {
	if !o.changesOK(s) {
		o.cr.general()
		return nil, false
	}
	// samples learnt without a Prepare since the last call: re-placed
	// first, and this call's map composed with that one
	ver := o.lastVer
	var pre []int32
	if o.dist.Added() != o.lastVer && o.cr.fast && o.cr.t.valid {
		o.relearn()
		pre = append(o.pre[:0], o.cr.t.prev...)
		o.pre = pre
	}
	o.fresh, o.lastVer = o.Index(0), o.dist.Added()
	out, ok = o.cr.rankBy(s, &o.sc, func(j *policy.Job) keyed {
		a, _ := j.ServiceAt(s.Now)
		k := keyed{job: j, queue: int32(o.q.queueOf(a)), k: [3]float64{stateTie(j), a, queuedAt(j)}}
		if k.k[0] == runningTie {
			k.k[1] = 0 // listed loosely
		}
		return k
	}, o.queueMv)
	if !ok {
		// the general path ranks it (a NaN Submit), reusing what it kept
		// of its own last call as of that call's samples
		o.lastVer = ver
		return nil, false
	}
	if pre != nil {
		for r, lr := range o.cr.t.prev {
			if lr >= 0 {
				o.cr.t.prev[r] = pre[lr]
			}
		}
	}
	// what the general path kept of its last call misses the samples
	// learnt since (lastVer moved on): nothing of it is reused
	o.loose, o.atValid, o.lastSvc, o.snap = true, false, o.lastSvc[:0], s
	return out, true
}

// gittinsFinal is the key a kept entry ranks by: a queued job's index at
// its service (k[1]) in place of the service (the fresh index at 0).
func (o *Gittins) gittinsFinal(e *posKey) [3]float64 {
	k := e.k
	if k[0] == runningTie {
		return k
	}
	if k[1] == 0 {
		k[1] = -o.fresh
	} else {
		k[1] = -o.Index(k[1])
	}
	return k
}

// relearn re-places the queued jobs whose index the samples learnt
// since the last call moved (those below the largest of them), at the
// distribution as it is now.
func (o *Gittins) relearn() {
	newMax := o.dist.MaxAddedSince(o.lastVer)
	o.fresh, o.lastVer = o.Index(0), o.dist.Added()
	o.cr.t.rerank(func(e *posKey) bool { return e.k[0] != runningTie && e.k[1] < newMax })
}

// prepareByChanges is Prepare after a call ranked by changes: the jobs
// the learnt samples moved are re-placed, a re-rank the Framework
// follows by its map (PrevRanks, counted as a call).
func (o *Gittins) prepareByChanges() bool {
	if !o.cr.t.valid {
		return false
	}
	o.relearn()
	o.cr.calls++
	return true
}

// sortRunningByChanges is SortRunning for a ranking by changes: the
// running jobs at ranks keyed exactly (their index at their service
// now, read from the call's snapshot), sorted, ties broken by list
// position as the ranking does.
func (o *Gittins) sortRunningByChanges(ranks []int) {
	t, s, vs := &o.cr.t, o.snap, &o.vs
	ks := grow(vs.ks, len(ranks))
	for c, r := range ranks {
		e := &t.ord[r]
		j := s.Jobs[e.pos]
		a, _ := j.ServiceAt(s.Now)
		ks[c] = keyed{job: j, queue: e.queue, at: e.pos + 1, k: [3]float64{runningTie, -o.Index(a), queuedAt(j)}}
	}
	vs.ks = ks
	vs.sort(ranks, t.at)
}

// PrevRanks says where each job of the last ranking stood in the one
// before it (policy.PrevRanker), for a ranking by changes and for
// Prepare's re-rank after one.
func (o *Gittins) PrevRanks() ([]int32, uint64) { return o.cr.prevRanks() }
