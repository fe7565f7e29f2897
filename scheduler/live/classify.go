package live

import "fmt"

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
	// badPlacement says why a stored placement could not be read.
	badPlacement string
}

// classify reads each managed job's phase and brings its record up to now.
func (s *Scheduler) classify(w *world, now float64) []*entry {
	var es []*entry
	seen := map[string]bool{}
	for _, j := range w.jobs {
		seen[j.ID] = true
		e := &entry{stub: j, rec: s.st.job(j.ID, now), allocs: summarise(w.allocs[j.ID])}
		e.phase = s.phaseOf(j)
		s.account(e, now)
		if e.phase == phaseQueued || e.phase == phaseRunning {
			e.job = s.fullJob(j)
		}
		es = append(es, e)
	}
	s.forget(seen, now)
	return es
}

func (s *Scheduler) phaseOf(j *jobStub) phase {
	switch {
	case j.Stop:
		return phaseGone
	case j.NodePool == s.cfg.QueuePool:
		return phaseQueued
	case j.Status == "dead":
		return phaseDone
	}
	return phaseRunning
}

// account updates service and holdings for one job.
func (s *Scheduler) account(e *entry, now float64) {
	r := e.rec
	switch e.phase {
	case phaseRunning:
		e.held = s.placementOf(e, MetaPlacement, e.stub.Meta[MetaPlacement])
		share := 0.0
		for _, t := range e.held {
			share += t.Fraction
		}
		if e.allocs.running > 0 {
			r.accrue(now, share)
		} else {
			r.pause()
		}
		return
	case phaseDone:
		if r.FinishedAt == 0 {
			r.FinishedAt = now
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
	s.metrics.badPlacements.Add(1)
	if s.badLogged[e.stub.ID] != text {
		s.badLogged[e.stub.ID] = text
		s.log.Warn("unreadable placement; its GPUs are not in the scheduler's book", "job", e.stub.ID, "from", where, "error", err)
	}
	return nil
}
