package live

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// An admitted job Nomad cannot place (a constraint the scheduler cannot
// evaluate, CPU or memory the node lacks) would hold its GPUs in the book
// while Nomad keeps it pending. After PlaceTimeout it goes back to the
// queue with Nomad's reason and waits PlaceTimeout before it is tried
// again, so a job that never fits costs two job versions per timeout, not
// a storm.

// unplaced reports whether e was admitted at least PlaceTimeout ago and
// Nomad has not placed any of it, nor is still to evaluate it: the mirror
// follows pending evaluations (evals.go), and a read that found one
// pending the mirror did not know of sets placeRecheck.
func (s *Scheduler) unplaced(e *entry, now float64) bool {
	waiting := e.phase == phaseRunning && e.stub.Status == "pending" && e.rec.LastStart > 0 &&
		now-e.rec.LastStart >= s.cfg.PlaceTimeout.Seconds() &&
		e.allocs.running+e.allocs.starting+e.allocs.draining == 0 &&
		(s.mirror == nil || !s.mirror.evalPending(e.stub.ID, e.stub.JobModifyIndex))
	if at, ok := s.placeRecheck[e.stub.ID]; ok {
		if !waiting || now >= at {
			delete(s.placeRecheck, e.stub.ID)
		}
		return waiting && now >= at
	}
	return waiting
}

// evalPending reports whether Nomad has an evaluation of the job at index
// (or later) it has not run yet: the job is not unplaceable, Nomad's
// broker is behind (measured with 10,000 jobs submitted at once: the
// placing evaluation waited over a minute, and requeueing such jobs sent
// them round again while Nomad placed the old version).
func evalPending(evals []*api.Evaluation, index uint64) bool {
	for _, ev := range evals {
		if ev.Status == "pending" && ev.JobModifyIndex >= index {
			return true
		}
	}
	return false
}

// unplacedChecks bounds the unplaced jobs one round looks at, oldest
// first: each is an evaluations read, and a read and a write for the ones
// sent back, admitParallel at once. When Nomad's broker ran minutes behind
// (10,000 jobs queued at once), thousands of admitted jobs passed
// PlaceTimeout together, and reading their evaluations one after another
// inside the round held it for seconds. Two round trips per round at most;
// the rest wait for the next round (rounds come every few hundred
// milliseconds then). Done beside the rounds instead, a check would settle
// on a job that may have finished or moved since it was read.
const unplacedChecks = 2 * admitParallel

// unplacedCheck is what Nomad said of one unplaced job.
type unplacedCheck struct {
	pending bool   // its evaluation is still to run
	why     string // why it goes back to the queue
	err     error  // the requeue's write failed
}

// requeueUnplaced sends the round's unplaced jobs back to the queue,
// saying why; their reads and writes run admitParallel at once.
func (s *Scheduler) requeueUnplaced(es []*entry, now time.Time) {
	var due []*entry
	for _, e := range es {
		if len(due) < unplacedChecks && s.unplaced(e, unix(now)) {
			due = append(due, e)
		}
	}
	checks := make([]unplacedCheck, len(due))
	inParallel(len(due), admitParallel, func(i int) error {
		checks[i] = s.checkUnplaced(due[i])
		return nil
	})
	for i, e := range due {
		s.settleUnplaced(e, checks[i], now)
		s.mark(e)
	}
}

// checkUnplaced reads the job's evaluations and, unless one is pending,
// writes it back into the queue pool (safe beside others: it changes
// nothing of the round's).
func (s *Scheduler) checkUnplaced(e *entry) unplacedCheck {
	c := unplacedCheck{why: "Nomad did not place it within " + s.cfg.PlaceTimeout.String()}
	s.call("job evaluations")
	if evals, _, err := s.api.Jobs().Evaluations(e.stub.ID, &api.QueryOptions{Namespace: s.cfg.Namespace}); err == nil {
		if evalPending(evals, e.stub.JobModifyIndex) {
			c.pending = true
			return c
		}
		if f := placementFailure(evals); f != "" {
			c.why = "Nomad could not place it: " + f
		}
	}
	job, err := s.readJob(e.stub.ID, e.stub.JobModifyIndex)
	if err == nil {
		unpinJob(job, s.cfg.QueuePool, c.why)
		_, err = s.register(job, e.stub.JobModifyIndex)
	}
	c.err = err
	return c
}

// settleUnplaced brings the job's record in line with what checkUnplaced
// found and did.
func (s *Scheduler) settleUnplaced(e *entry, c unplacedCheck, now time.Time) {
	switch {
	case c.pending:
		s.placeRecheck[e.stub.ID] = unix(now) + s.cfg.PlaceTimeout.Seconds()
		s.log.Debug("admitted job not placed yet, its evaluation still pending; checking again later", "job", e.stub.ID)
		return
	case c.err != nil:
		s.fail(e, "requeue unplaced", c.err, now)
		return
	}
	r := e.rec
	r.pause()
	r.QueuedSince, r.PlaceFailedAt, r.PlaceFailure = unix(now), unix(now), c.why
	e.phase, e.held = phaseQueued, nil
	s.record(e.stub.ID, "unplaced", c.why, now)
	s.log.Warn("admitted job not placed by Nomad; back to the queue", "job", e.stub.ID, "reason", c.why)
}

// placeBackoff is why a job recently returned unplaced still waits, "" once
// its PlaceTimeout has passed.
func (s *Scheduler) placeBackoff(r *record, now float64) string {
	if r.PlaceFailedAt == 0 || now-r.PlaceFailedAt >= s.cfg.PlaceTimeout.Seconds() {
		return ""
	}
	return fmt.Sprintf("%s; trying again in %.0fs", r.PlaceFailure, r.PlaceFailedAt+s.cfg.PlaceTimeout.Seconds()-now)
}

// placementFailure summarises the newest evaluation's placement failure:
// for each failed group, what filtered or exhausted the nodes.
func placementFailure(evals []*api.Evaluation) string {
	var newest *api.Evaluation
	for _, ev := range evals {
		if len(ev.FailedTGAllocs) > 0 && (newest == nil || ev.CreateIndex > newest.CreateIndex) {
			newest = ev
		}
	}
	if newest == nil {
		return ""
	}
	groups := make([]string, 0, len(newest.FailedTGAllocs))
	for g := range newest.FailedTGAllocs {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var parts []string
	for _, g := range groups {
		m := newest.FailedTGAllocs[g]
		var why []string
		for _, k := range sortedCounts(m.DimensionExhausted) {
			why = append(why, k+" exhausted")
		}
		for _, k := range sortedCounts(m.ConstraintFiltered) {
			why = append(why, "constraint "+k+" filtered")
		}
		if len(why) == 0 {
			why = append(why, fmt.Sprintf("%d of %d nodes filtered", m.NodesFiltered, m.NodesEvaluated))
		}
		parts = append(parts, fmt.Sprintf("group %q: %s", g, strings.Join(why, ", ")))
	}
	return strings.Join(parts, "; ")
}

func sortedCounts(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
