package live

import (
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
)

// phase is where a managed job is, as read from Nomad.
type phase int

const (
	phaseQueued  phase = iota // in the queue pool
	phaseRunning              // admitted into a real pool
	phaseDone                 // admitted and finished (batch job dead)
	phaseGone                 // stopped by its user
)

func (p phase) String() string {
	return [...]string{"queued", "running", "finished", "stopped"}[p]
}

// entry is one managed job in one round.
type entry struct {
	stub   *jobStub
	job    *cachedJob
	rec    *record
	phase  phase
	allocs jobAllocs
	// held is where the job holds GPUs: its admitted placement while it
	// runs, its last placement while preempted allocations drain.
	held []target
	// booked is what the held book counts of held (heldbook.go).
	booked booking
	// badPlacement says why a stored placement could not be read.
	badPlacement string
	// unfit says why no node may take this queued job (see class.go).
	unfit string
	// failed says why a finished job failed ("" = it succeeded).
	failed string
	// kept is what the incremental round keeps with it (incremental.go);
	// fresh says the entry was built this round.
	kept  kept
	fresh bool
}

// classify reads each managed job's phase and brings its record up to now.
func (s *Scheduler) classify(w *world, now float64) []*entry {
	var es []*entry
	seen := map[string]bool{}
	s.readJobs(w.jobs)
	for _, j := range w.jobs {
		seen[j.ID] = true
		es = append(es, s.classifyJob(j, w.allocs[j.ID], now))
	}
	s.forget(seen, now)
	return es
}

// classifyJob builds one job's entry: its phase, record and full job.
func (s *Scheduler) classifyJob(j *jobStub, allocs []*api.AllocationListStub, now float64) *entry {
	submit := submitTime(j, now)
	e := &entry{stub: j, rec: s.st.job(j.ID, submit, j.CreateIndex), allocs: summarise(allocs)}
	e.phase = s.phaseOf(j)
	if e.phase == phaseQueued && e.rec.newRun(j.CreateIndex) {
		e.rec.restart(submit, j.CreateIndex)
		s.progress.forget(j.ID)
		s.dirty = true
	}
	s.account(e, now, allocs)
	if e.phase != phaseGone {
		e.job = s.fullJob(j) // cached per JobModifyIndex: one read per change
	}
	if e.phase == phaseDone {
		e.failed = failure(allocs)
	}
	return e
}

func (s *Scheduler) phaseOf(j *jobStub) phase {
	switch {
	case j.Stop:
		return phaseGone
	case j.NodePool == s.cfg.QueuePool || s.parked(j):
		return phaseQueued
	case j.Status == "dead":
		return phaseDone
	}
	return phaseRunning
}

// submitTime is when Nomad took the job's latest version, or now if the
// stub has none.
func submitTime(j *jobStub, now float64) float64 {
	if j.SubmitTime <= 0 {
		return now
	}
	return min(float64(j.SubmitTime)/1e9, now)
}

// account updates service and holdings for one job.
func (s *Scheduler) account(e *entry, now float64, allocs []*api.AllocationListStub) {
	r := e.rec
	switch e.phase {
	case phaseRunning:
		e.held = s.placementOf(e, MetaPlacement, e.stub.Meta[MetaPlacement])
		if e.allocs.running > 0 {
			if r.accrue(now, share(e.held)) {
				s.dirty = true
			}
		} else {
			r.pause()
		}
		return
	case phaseDone:
		if r.FinishedAt == 0 {
			// Service up to when its tasks really ended, which may be
			// long before now (a scheduler restart, a slow round).
			end := min(lastFinish(allocs, now), now)
			r.accrue(end, share(s.placementOf(e, "state", r.Placement)))
			r.FinishedAt = end
			s.dirty = true
		}
	case phaseQueued:
		if r.QueuedSince == 0 {
			r.QueuedSince = now
		}
	}
	r.pause()
	if e.allocs.draining > 0 || e.allocs.running+e.allocs.starting > 0 {
		e.held = s.placementOf(e, "state", r.Placement)
	}
}

// forget drops records of jobs Nomad no longer has, and of finished jobs
// after a while, so the state Variable stays small.
func (s *Scheduler) forget(seen map[string]bool, now float64) {
	for id, r := range s.st.Jobs {
		old := r.FinishedAt > 0 && now-r.FinishedAt > 3600
		if !seen[id] || old {
			delete(s.st.Jobs, id)
			delete(s.jobs, id)
			delete(s.badLogged, id)
			delete(s.parkTried, id)
			s.dirty = true
		}
	}
}

// placementOf decodes a stored placement. A corrupt one holds no GPUs in
// the scheduler's book (the driver's fingerprint still shows their use);
// it is counted, logged once per value, and shown in the queue view.
func (s *Scheduler) placementOf(e *entry, where, text string) []target {
	ts, err := decodePlacement(text)
	if err == nil {
		return ts
	}
	e.badPlacement = fmt.Sprintf("unreadable placement in %s: %v", where, err)
	s.metrics.badPlacements.Inc()
	if s.badLogged[e.stub.ID] != text {
		s.badLogged[e.stub.ID] = text
		s.log.Warn("unreadable placement; its GPUs are not in the scheduler's book", "job", e.stub.ID, "from", where, "error", err)
	}
	return nil
}

// share is a placement's GPU share (workers × fraction).
func share(ts []target) float64 {
	x := 0.0
	for _, t := range ts {
		x += t.Fraction
	}
	return x
}

// lastFinish is when the job's last task ended (Unix seconds), or def
// if no task says.
func lastFinish(as []*api.AllocationListStub, def float64) float64 {
	var last time.Time
	for _, a := range as {
		for _, ts := range a.TaskStates {
			if ts != nil && ts.FinishedAt.After(last) {
				last = ts.FinishedAt
			}
		}
	}
	if last.IsZero() {
		return def
	}
	return unix(last)
}
