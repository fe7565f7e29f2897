package live

import (
	"errors"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Parking (#20). A job waiting in the queue pool has a blocked evaluation
// that saw no node (the pool has none), so its class eligibility is empty
// and Nomad's blocked-evals tracker re-runs it whenever capacity frees on
// any node: with a long queue, every ended allocation re-ran every waiting
// job (~230 re-runs per ended allocation at 1,000 queued jobs).
//
// A job that has waited Config.ParkAfter is therefore parked: rewritten
// (check-and-set) into the pool it would run in, behind a job-level
// constraint no node meets on a non-unique node attribute (parkTarget).
// Nomad's evaluation then sees the pool's nodes, rejects each node class
// on that constraint and records the classes as ineligible, so ended
// allocations on those classes no longer wake it. Caravan admits a
// parked job as any queued one (admitJob drops the constraint), so Nomad
// never has to. A rewrite is a job version and an evaluation, so jobs
// caravan admits quickly are never parked.

// parkTarget is the park constraint's attribute: node meta no node may
// carry. Node meta is part of Nomad's computed node class; a
// ${node.unique.*}, ${attr.unique.*} or ${meta.unique.*} target would
// escape the class and be woken by every node again.
const parkTarget = "${meta.caravan_parked}"

// ParkConstraintHCL is the park constraint as a jobspec block: with meta
// MetaParked set, in the job's real pool, a job is submitted already
// parked (README, "Submitting jobs parked").
const ParkConstraintHCL = "  constraint {\n    attribute = \"" + parkTarget + "\"\n    operator  = \"is_set\"\n  }\n"

// parkBatch bounds the parks in flight, oldest jobs first.
const parkBatch = 100

// isParkConstraint reports whether c is the scheduler's park constraint.
func isParkConstraint(c *api.Constraint) bool { return c.LTarget == parkTarget }

// parkJob rewrites job in place into pool, parked behind the park
// constraint; the user's own constraints stay as they are.
func parkJob(job *api.Job, pool string, now time.Time) {
	unparkJob(job)
	job.NodePool = &pool
	job.Constraints = append(job.Constraints, api.NewConstraint(parkTarget, "is_set", ""))
	setMeta(job, MetaParked, now.UTC().Format(time.RFC3339))
}

// unparkJob drops the park constraint and meta (admission and requeue do;
// the pool is theirs to set).
func unparkJob(job *api.Job) {
	out := job.Constraints[:0]
	for _, c := range job.Constraints {
		if !isParkConstraint(c) {
			out = append(out, c)
		}
	}
	job.Constraints = out
	if len(job.Constraints) == 0 {
		job.Constraints = nil
	}
	delete(job.Meta, MetaParked)
}

// parked reports whether a job stub is in its parked form: outside the
// queue pool, with park meta and not admitted.
func (s *Scheduler) parked(j *jobStub) bool {
	return j.NodePool != s.cfg.QueuePool && j.Meta[MetaParked] != "" && j.Meta[MetaAdmitted] == ""
}

// Park writes run beside the rounds (beside.go). A round that waited for
// its parks took seconds once the server was busy (round p99 4.1 s with
// 10,000 queued jobs: 100 writes, 8 at a time, each queued behind the
// placements Nomad was making), while parking is never urgent: it only
// spares Nomad re-running blocked evaluations. Check-and-set settles a
// park that races an admission of the same job (one of the two fails as a
// conflict, and the next round reads the winner), and a park does not
// raise the index the next round waits to see (put, not register).

// parkDone is one finished park write.
type parkDone struct {
	index uint64 // the job version it was parked from
	pool  string
	err   error
}

func newParker() *beside[parkDone] { return newBeside[parkDone](parkBatch, admitParallel) }

// park takes in the parks that finished since the last round, then starts
// parking the queued jobs that have waited Config.ParkAfter (in the
// entries' order, oldest first), up to parkBatch in flight; it does not
// wait for the writes.
func (s *Scheduler) park(w *world, es []*entry, now time.Time) {
	s.parks.take(s.waitBeside, func(id string, d parkDone) { s.parkResult(id, d, now) })
	if s.cfg.ParkAfter < 0 {
		return
	}
	for _, e := range es {
		if !s.parks.room() {
			break
		}
		if e.phase != phaseQueued || s.parks.busy(e.stub.ID) { // (running jobs: no lookup)
			continue
		}
		if pool, ok := s.parkable(w, e, unix(now)); ok {
			d, job := parkDone{index: e.stub.JobModifyIndex, pool: pool}, cachedCopy(e)
			id := e.stub.ID
			s.parks.start(id, func() parkDone { return s.writePark(id, d, job, now) })
		}
	}
}

// parkResult takes in one finished park. A park that succeeded marks the
// version it was parked from as well as one that failed: the mirror sees
// the parked version only when its event arrives (the next round does not
// wait for it), and until then the stale stub would look parkable, and
// its second write would be refused as a conflict (5,645 of them in one
// run of 10,000 jobs, each a register call on the server).
func (s *Scheduler) parkResult(id string, d parkDone, now time.Time) {
	if d.err == nil || !errors.Is(d.err, errConflict) {
		s.parkTried[id] = d.index // not this version again
	}
	if d.err != nil {
		s.failID(id, "park", d.err, now)
		return
	}
	s.metrics.parks.Inc()
	s.log.Debug("parked", "job", id, "pool", d.pool)
}

// parkable says whether e is due to be parked, and into which pool: a
// valid queued job still in the queue pool (never one this round admitted,
// preempted or requeued: their stubs are stale), holding no allocations,
// whose real pool exists and has a node caravan can use (in a pool with
// none, Nomad's evaluation would see no node and mark no class: parking
// would cost a version and change nothing), that has waited ParkAfter,
// and that was not already parked, nor failed to be, at this version.
func (s *Scheduler) parkable(w *world, e *entry, now float64) (string, bool) {
	r := e.rec
	switch {
	case e.phase != phaseQueued || e.stub.NodePool != s.cfg.QueuePool || e.job == nil || e.job.err != nil,
		r.QueuedSince == 0 || now-r.QueuedSince < s.cfg.ParkAfter.Seconds(),
		e.allocs.running+e.allocs.starting+e.allocs.draining > 0,
		s.parkTried[e.stub.ID] == e.stub.JobModifyIndex:
		return "", false
	}
	pool, err := s.targetPool(e.stub.Meta, w.pools)
	if err != nil {
		return "", false
	}
	if w.sets == nil {
		w.sets = &nodeSets{}
	}
	return pool, len(w.poolSet(pool).ids) > 0
}

// writePark rewrites one job into its parked form (beside the rounds).
// job is the cached job's copy, nil when it must be read.
func (s *Scheduler) writePark(id string, d parkDone, job *api.Job, now time.Time) parkDone {
	if job == nil {
		job, d.err = s.readJob(id, d.index)
	}
	if d.err == nil {
		parkJob(job, d.pool, now)
		_, d.err = s.put(job, d.index) // no round waits to see a park
	}
	return d
}
