package live

import (
	"errors"
	"fmt"
	"time"
)

// Admissions are bounded by what Nomad has still to place. Each admission
// is an evaluation in Nomad's broker, and the broker runs a handful at
// once (one worker per server core): at 1,000 nodes with 8,000 free GPUs
// the scheduler admitted jobs far faster than that, the placing
// evaluations waited ~5 minutes, every admitted job passed PlaceTimeout
// and had its evaluations read once a minute (23,615 reads for 10,000
// jobs), and the server spent on those reads what it needed for
// placing. Past a short queue, admitting faster only lengthens the queue.

// defaultMaxUnplaced is no bound. Measured at 1,000 nodes × 10,000 jobs
// (scheduler/live/README.md): a bound of 256 kept round p99 under 0.77 s
// but placed 12.3 jobs/s against 16.9 without one, and 1024 placed 12.7
// with rounds as slow as none. Held back, jobs wait in the queue pool,
// where Nomad runs their submission and park evaluations (4.8 a job);
// admitted at once, the admission replaces them before they run (2.8).
// Nomad's workers are the bottleneck there, so evaluations per job set
// the pace. A bound is for a Nomad shared with other work, whose jobs
// should not queue behind thousands of caravan admissions.
const defaultMaxUnplaced = -1

// admitsPerRound bounds one round's admissions: eight round trips of
// admitParallel writes, so a round stays short when thousands of jobs
// could start at once (the rest go in the rounds right after, which come
// as soon as the admissions' events arrive).
const admitsPerRound = 8 * admitParallel

// decideStarts is the start budget of a round's decision
// (policy.Snapshot.MaxStarts). A round admits at most admitsPerRound
// jobs, so a decision's starts past them are thrown away and decided
// again next round: after a mass preemption at 10,000 nodes one 2D-LAS
// decision made 9,396 starts in ~96 ms. Twice admitsPerRound leaves
// room for the starts apply passes over (a job whose last allocations
// still stop, a gang the really free GPUs do not hold yet).
const decideStarts = 2 * admitsPerRound

// admitWriteTime bounds the time one round spends writing admissions:
// past it, the round sends no more (the first admitParallel always go)
// and the jobs left are decided again next round. At 1,000 nodes × 10,000
// jobs, while users were still submitting, a register took 120–220 ms and
// rounds writing 64 admissions took 1–1.8 s: 38 of the 39 rounds over
// 1 s. A write sent just before the bound can still take a few hundred
// milliseconds.
const admitWriteTime = 300 * time.Millisecond

// errAdmitDeferred marks an admission the round had no time left to write.
var errAdmitDeferred = errors.New("admission deferred to the next round")

// awaitingPlacement reports whether e was admitted and Nomad has not yet
// placed any of it.
func awaitingPlacement(e *entry) bool {
	return e.phase == phaseRunning && e.stub.Status == "pending" && e.rec.LastStart > 0 &&
		e.allocs.running+e.allocs.starting+e.allocs.draining == 0
}

// countUnplaced sets the round's count of admitted jobs awaiting placement
// (and starts its count of admissions).
func (s *Scheduler) countUnplaced(es []*entry) {
	s.admitting = 0
	n := 0
	for _, e := range es {
		if awaitingPlacement(e) {
			n++
		}
	}
	s.awaiting = n
	s.metrics.awaitingPlacement.Set(float64(n))
}

// admitBudget is why a start must wait for Nomad to place earlier
// admissions, "" if it may go ahead.
func (s *Scheduler) admitBudget() string {
	if s.admitting >= admitsPerRound {
		s.poke() // the rest go in the next round, not at the next event
		return fmt.Sprintf("admitting at most %d jobs a round; next round", admitsPerRound)
	}
	max := s.cfg.MaxUnplaced
	if max < 0 || s.awaiting < max {
		return ""
	}
	return fmt.Sprintf("waiting for Nomad to place %d admitted jobs (at most %d at once: -max-unplaced)", s.awaiting, max)
}
