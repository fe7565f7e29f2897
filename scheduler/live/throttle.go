package live

import "fmt"

// Admissions are bounded by what Nomad has still to place. Each admission
// is an evaluation in Nomad's broker, and the broker runs a handful at
// once (one worker per server core): at 1,000 nodes with 8,000 free GPUs
// the scheduler admitted jobs far faster than that, the placing
// evaluations waited ~5 minutes, every admitted job passed PlaceTimeout
// and had its evaluations read once a minute (23,615 reads for 10,000
// jobs), and the server spent on those reads what it needed for
// placing. Past a short queue, admitting faster only lengthens the queue.

// defaultMaxUnplaced bounds admitted jobs Nomad has not placed yet: about
// half a PlaceTimeout of the ~30 placements a second one server made at
// 1,000 nodes, so admitted jobs are placed before they are checked. A
// tighter bound (256, measured) kept rounds short but cost a third of the
// throughput: jobs then waited in the queue pool, where Nomad runs their
// submission and park evaluations, instead of being admitted early enough
// for Nomad to cancel those unrun (4.8 evaluations a job against 2.8).
const defaultMaxUnplaced = 1024

// admitsPerRound bounds one round's admissions: eight round trips of
// admitParallel writes, so a round stays short when thousands of jobs
// could start at once (the rest go in the rounds right after, which come
// as soon as the admissions' events arrive).
const admitsPerRound = 8 * admitParallel

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
