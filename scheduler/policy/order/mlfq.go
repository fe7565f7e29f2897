package order

import "github.com/caravan-dl/caravan/scheduler/policy"

// LASMLFQ is 2D-LAS with the in-queue rule of Tiresias' reference
// simulator (dlas_sim_jobs), a classic multi-level feedback queue: each
// queue is a list; a new job joins the end of Q0, a demoted (or promoted)
// job the end of its new queue, and after every round the jobs left
// waiting move behind the running ones, keeping their relative order. So a
// job just demoted into a queue ranks behind that queue's waiters, which
// may then preempt it, and a job preempted from a queue stays ahead of the
// jobs that were already waiting there.
//
// LAS, Caravan's default, differs in two ways: inside a queue every
// running job ranks ahead of every waiting one (a job is only preempted by
// a higher queue), and a preempted job waits behind the jobs that waited
// before it (FIFO by queue-join time).
//
// The lists hold entries, not IDs: a replay orders ~1,000 jobs some
// 200,000 times, and looking every one up by ID in maps on every call was
// most of its time. Entries are found again by walking the last call's
// list beside this one when both are in (Submit, ID) order
// (Snapshot.SubmitOrdered), else by ID; only arrivals and departures touch
// the map.
type LASMLFQ struct {
	q     *queues
	lists [][]*mlfqEntry        // per queue, in list order (may hold stale entries)
	byID  map[string]*mlfqEntry // every listed job
	prev  []*mlfqEntry          // last call's entries, aligned with its active jobs
	ent   []*mlfqEntry          // this call's, reused
	wait  []*mlfqEntry
	epoch uint64
	sc    scratch
}

// mlfqEntry is one listed job. A list position whose entry has since
// moved to another queue (q differs) or departed (seen is old) is stale
// and skipped; the next round's settle drops it.
type mlfqEntry struct {
	job     *policy.Job
	id      string
	submit  policy.Seconds
	q       int
	seen    uint64 // the last call that listed the job
	emitted uint64 // the last call whose ranking holds it
}

// NewLASMLFQ builds 2D-LAS with the reference's queue discipline.
func NewLASMLFQ(cfg QueueConfig) (*LASMLFQ, error) {
	q, err := newQueues(cfg)
	if err != nil {
		return nil, err
	}
	return &LASMLFQ{q: q, lists: make([][]*mlfqEntry, q.cfg.Queues), byID: map[string]*mlfqEntry{}}, nil
}

// Name is "tiresias-las-mlfq".
func (*LASMLFQ) Name() string { return "tiresias-las-mlfq" }

// Preemptive is true.
func (*LASMLFQ) Preemptive() bool { return true }

// Queues is the number of priority queues.
func (l *LASMLFQ) Queues() int { return l.q.Queues() }

// listed is how many jobs the lists hold.
func (l *LASMLFQ) listed() int { return len(l.byID) }

// Order ranks by queue, then list position.
func (o *LASMLFQ) Order(s *policy.Snapshot) []policy.Ranked {
	js := o.sc.active(s)
	svc := o.q.update(s.Now, js)
	o.epoch++
	ent := o.find(js, s.SubmitOrdered)
	for _, e := range o.prev { // departed jobs
		if e.seen != o.epoch && o.byID[e.id] == e {
			delete(o.byID, e.id)
		}
	}
	for k := range o.lists {
		o.lists[k] = o.settle(o.lists[k], k)
	}
	for i, j := range js { // arrivals first, as the reference
		if ent[i] == nil {
			ent[i] = o.arrive(j, o.q.queueOf(svc[i]))
		}
	}
	for i, e := range ent { // then demotions and promotions
		if k := o.q.queueOf(svc[i]); e.q != k {
			e.q = k // its old position is now stale
			o.lists[k] = append(o.lists[k], e)
		}
	}
	o.prev, o.ent = ent, o.prev
	out := o.sc.out[:0]
	for k, l := range o.lists {
		for _, e := range l {
			if e.q == k && e.seen == o.epoch && e.emitted != o.epoch {
				e.emitted = o.epoch
				out = append(out, policy.Ranked{Job: e.job, Queue: k})
			}
		}
	}
	o.sc.out = out
	return out
}

// find returns each active job's entry (nil for a job not listed yet),
// marking it seen and pointing it at this snapshot's job.
func (o *LASMLFQ) find(js []*policy.Job, ordered bool) []*mlfqEntry {
	ent := grow(o.ent, len(js))
	if !ordered || !o.walk(js, ent) {
		for i, j := range js {
			ent[i] = o.byID[j.ID]
		}
	}
	for i, e := range ent {
		if e != nil {
			e.job, e.seen = js[i], o.epoch
		}
	}
	return ent
}

// walk matches js against the last call's entries, both in (Submit, ID)
// order; false if js is not strictly in that order.
func (o *LASMLFQ) walk(js []*policy.Job, ent []*mlfqEntry) bool {
	for i := 1; i < len(js); i++ {
		if compareSubmit(js[i-1], js[i]) >= 0 {
			return false
		}
	}
	k, prev := 0, o.prev
	for i, j := range js {
		ent[i] = nil
		for k < len(prev) && entryBefore(prev[k], j) {
			k++ // departed
		}
		if k < len(prev) && prev[k].id == j.ID && prev[k].submit == j.Submit {
			ent[i] = prev[k]
			k++
		}
	}
	return true
}

// entryBefore reports whether e's job sorts before j by (Submit, ID).
func entryBefore(e *mlfqEntry, j *policy.Job) bool {
	if e.submit != j.Submit {
		return e.submit < j.Submit
	}
	return e.id < j.ID
}

// arrive lists a new job at the end of queue k (or finds it by ID: a
// snapshot that lists an ID twice ranks it once).
func (o *LASMLFQ) arrive(j *policy.Job, k int) *mlfqEntry {
	if e := o.byID[j.ID]; e != nil {
		e.job, e.seen = j, o.epoch
		return e
	}
	e := &mlfqEntry{job: j, id: j.ID, submit: j.Submit, q: k, seen: o.epoch}
	o.byID[j.ID] = e
	o.lists[k] = append(o.lists[k], e)
	return e
}

// settle drops departed and stale entries from queue k's list and moves
// the waiting ones behind the running ones, each in list order (the
// reference's end of round).
func (o *LASMLFQ) settle(l []*mlfqEntry, k int) []*mlfqEntry {
	keep, wait := l[:0], o.wait[:0]
	for _, e := range l {
		switch {
		case e.q != k || e.seen != o.epoch || e.emitted == o.epoch:
		case e.job.State == policy.Running:
			e.emitted = o.epoch // dedupe mark, reset below
			keep = append(keep, e)
		default:
			e.emitted = o.epoch
			wait = append(wait, e)
		}
	}
	l = append(keep, wait...)
	for _, e := range l {
		e.emitted = 0
	}
	clear(wait)
	o.wait = wait[:0]
	return l
}
