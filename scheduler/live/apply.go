package live

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// apply carries out a decision: preemptions first, then admissions that
// fit what is really free (a preempted job keeps its GPUs until its tasks
// have checkpointed and stopped). It returns why the jobs the decision
// started but this round did not start still wait; the decision's own
// Waiting says why the others do. The queue view shows both; no job is
// rewritten to explain (a rewrite is a job version).
func (s *Scheduler) apply(w *world, es []*entry, l *gpuBook, dec policy.Decision, now time.Time) map[string]string {
	byID := s.entryIndex(es)
	waiting := map[string]string{}
	why := preemptedWaits(dec)
	for _, id := range dec.Preempts {
		e := byID[id]
		if e == nil || e.phase != phaseRunning {
			continue
		}
		if startingTask(e, now) {
			s.log.Debug("preemption waits for the job's tasks to start", "job", id)
			continue
		}
		s.preempt(e, preemptReason(why[id]), now)
	}
	started := map[string]bool{}
	var ads []*admission
	for _, st := range dec.Starts {
		e := byID[st.JobID]
		if e == nil || e.phase != phaseQueued || e.job == nil || e.job.err != nil {
			continue
		}
		if why := s.admitBudget(); why != "" {
			waiting[e.stub.ID] = why
			continue
		}
		ad, why := s.start(e, st.Placement, w, l, now)
		if why != "" {
			waiting[e.stub.ID] = why
			continue
		}
		ads = append(ads, ad)
		s.awaiting++
		s.admitting++
	}
	if len(dec.Starts) >= decideStarts && len(ads) > 0 {
		// the decision stopped at its budget and this round got on:
		// the jobs it did not reach are decided next round, not at the
		// next event (a round that admitted nothing waits for one)
		s.poke()
	}
	s.writeAdmissions(ads, w.nodes, now)
	for _, ad := range ads {
		if why := s.admitted(ad, now); why != "" {
			waiting[ad.e.stub.ID] = why
			continue
		}
		started[ad.e.stub.ID] = true
	}
	for _, e := range es {
		if e.phase == phaseQueued && !started[e.stub.ID] {
			s.repair(e)
		}
	}
	return waiting
}

// admission is one job being admitted in this round: where, and how its
// rewrite went.
type admission struct {
	e   *entry
	ts  []target
	err error
}

// start books one job's placement if it fits; otherwise it says why not.
// The GPUs stay booked for the rest of the round even if the rewrite then
// fails: the policy placed nothing else on them.
func (s *Scheduler) start(e *entry, p policy.Placement, w *world, l *gpuBook, now time.Time) (*admission, string) {
	if e.allocs.running+e.allocs.starting+e.allocs.draining > 0 {
		// A preempted run still checkpointing (or a stray allocation
		// repair stops): resuming now would read a stale checkpoint, and
		// the old allocation's GPUs would be forgotten once the job runs
		// again under its new placement.
		return nil, "waiting for its previous allocations to stop"
	}
	prev := s.placementOf(e, "state", e.rec.Placement)
	ts, err := resolve(e.job.gang, keepCheckpoints(e.job.gang, p, prev), w.nodes)
	if err != nil {
		s.fail(e, "admit", err, now)
		return nil, "placement error: " + err.Error()
	}
	if !l.fits(ts) {
		return nil, "waiting for preempted jobs to checkpoint and release their GPUs"
	}
	l.commit(ts)
	s.metrics.admitAttempts.Inc()
	return &admission{e: e, ts: ts}, ""
}

// admitParallel bounds the job rewrites one round sends Nomad at once.
// One at a time, a round admitting hundreds of jobs took seconds per
// dozen (a register call waits for Nomad's Raft commit).
const admitParallel = 8

// writeAdmissions rewrites every admitted job into its real pool, pinned
// to its targets, with check-and-set, up to admitParallel at once. Each
// write touches only its own job; the round's bookkeeping happens after,
// in order (admitted).
func (s *Scheduler) writeAdmissions(ads []*admission, nodes map[string]*nodeInfo, now time.Time) {
	began := time.Now()
	inParallel(len(ads), admitParallel, func(i int) error {
		if i >= admitParallel && time.Since(began) >= admitWriteTime {
			ads[i].err = errAdmitDeferred
			return nil
		}
		ads[i].err = s.writeAdmission(ads[i].e, ads[i].ts, nodes, now)
		return nil
	})
}

// writeAdmission rewrites one job (safe to run beside others).
func (s *Scheduler) writeAdmission(e *entry, ts []target, nodes map[string]*nodeInfo, now time.Time) error {
	job, err := s.jobToRewrite(e)
	if err != nil {
		return err
	}
	if s.cfg.AdmitDelay > 0 {
		time.Sleep(s.cfg.AdmitDelay)
	}
	pool := e.stub.Meta[MetaPool]
	if pool == "" {
		pool = s.cfg.Pool
	}
	admitJob(job, pool, ts, rendezvousFor(e.stub.ID, e.rec.Admissions, ts, nodes, s.cfg.RendezvousAddr), now)
	_, err = s.register(job, e.stub.JobModifyIndex)
	return err
}

// admitted records one admission's outcome; "" means the job was admitted.
func (s *Scheduler) admitted(ad *admission, now time.Time) string {
	e := ad.e
	if errors.Is(ad.err, errAdmitDeferred) {
		s.awaiting--
		s.admitting--
		s.poke() // the next round decides it again
		return fmt.Sprintf("admitting for at most %s a round; next round", admitWriteTime)
	}
	if ad.err != nil {
		s.fail(e, "admit", ad.err, now)
		if errors.Is(ad.err, errConflict) {
			return "job changed while being admitted; re-deciding"
		}
		return "admission failed: " + ad.err.Error()
	}
	r := e.rec
	r.Admissions++
	r.LastStart, r.QueuedSince, r.Placement = unix(now), 0, encodePlacement(ad.ts)
	s.metrics.admissions.Inc()
	observe(s.metrics.waitSeconds, unix(now)-r.Submit)
	s.record(e.stub.ID, "admit", r.Placement, now)
	s.log.Info("admitted", "job", e.stub.ID, "placement", r.Placement)
	return ""
}

// preempt rewrites a running job back to the queue (CAS), then stops its
// allocations so its tasks get their kill signal and grace to checkpoint.
func (s *Scheduler) preempt(e *entry, reason string, now time.Time) {
	job, err := s.jobToRewrite(e)
	if err == nil {
		requeueJob(job, s.cfg.QueuePool, reason)
		_, err = s.register(job, e.stub.JobModifyIndex)
	}
	if err != nil {
		s.fail(e, "preempt", err, now)
		return
	}
	r := e.rec
	r.Preemptions++
	r.QueuedSince = unix(now)
	r.pause()
	e.phase = phaseRunning // still holds its GPUs this round
	s.metrics.preemptions.Inc()
	s.record(e.stub.ID, "preempt", reason, now)
	s.log.Info("preempted", "job", e.stub.ID, "reason", reason)
	if n, err := s.stopAllocs(e.stub.ID); err != nil {
		s.fail(e, "stop", err, now)
	} else {
		s.log.Debug("stopped allocations", "job", e.stub.ID, "count", n)
	}
}

// repair stops allocations of a queued job that still run: a preemption
// whose stop did not happen (the scheduler died in between) or a running
// job its user re-submitted into the queue.
func (s *Scheduler) repair(e *entry) {
	if e.allocs.running+e.allocs.starting == 0 {
		return
	}
	if n, err := s.stopAllocs(e.stub.ID); err != nil {
		s.log.Warn("cannot stop allocations of a queued job", "job", e.stub.ID, "error", err)
	} else if n > 0 {
		s.log.Info("stopped allocations of a queued job", "job", e.stub.ID, "count", n)
	}
}

// fail logs and records a failed action; conflicts are counted apart.
func (s *Scheduler) fail(e *entry, action string, err error, now time.Time) {
	s.failID(e.stub.ID, action, err, now)
}

// failID is fail for a job known by ID.
func (s *Scheduler) failID(id, action string, err error, now time.Time) {
	if errors.Is(err, errConflict) {
		s.metrics.conflicts.Inc()
		s.record(id, "conflict", action+": "+err.Error(), now)
		s.log.Info("job changed under the scheduler; re-reading", "job", id, "action", action)
		s.poke()
		return
	}
	s.metrics.errors.Inc()
	s.record(id, "error", fmt.Sprintf("%s: %v", action, err), now)
	s.log.Warn("action failed", "job", id, "action", action, "error", err)
}

func (s *Scheduler) record(job, action, detail string, now time.Time) {
	s.st.log(s.cfg.KeepDecisions, decision{At: unix(now), Job: job, Action: action, Detail: detail})
	s.dirty = true
}

// preemptedWaits is the decision's reason for each job it preempts: a
// map of those few, not of every queued job's reason (10,000 map writes a
// round at scale, for a view built at most once a second).
func preemptedWaits(dec policy.Decision) map[string]string {
	if len(dec.Preempts) == 0 {
		return nil
	}
	why := make(map[string]string, len(dec.Preempts))
	for _, id := range dec.Preempts {
		why[id] = ""
	}
	for _, w := range dec.Waiting {
		if _, ok := why[w.JobID]; ok {
			why[w.JobID] = w.Reason
		}
	}
	return why
}

// preemptReason is the reason a preempted job shows while it waits.
func preemptReason(why string) string {
	if why == "" {
		return "preempted by the scheduling policy"
	}
	if strings.HasPrefix(why, "preempted") {
		return why
	}
	return "preempted: " + why
}
