package policy

import "strconv"

// The start budget (Snapshot.MaxStarts). A caller that applies at most N
// starts a round (the live scheduler writes 64 admissions a round) gains
// nothing from a decision that makes thousands: after a mass preemption
// a 2D-LAS decision at 10,000 nodes started 9,396 jobs in ~96 ms, and all
// but 64 were thrown away and decided again next round. With a budget
// the walk stops at its N-th start. Everything before it is what the
// unbounded walk does (the walk is sequential, so the budgeted decision
// is the unbounded one's prefix: its first N starts and the preemptions
// made for them), and every queued job the walk did not reach waits with
// BudgetReason, or with its own reason where it can never start.

// BudgetReason is the Waiting text of a queued job a decision with a
// start budget of n did not reach.
func BudgetReason(n int) string {
	return "not considered this round: the decision stopped at its start budget of " +
		strconv.Itoa(n) + " starts; decided again next round"
}

// spent reports that the round has made its budget of starts.
func (r *round) spent() bool {
	return r.s.MaxStarts > 0 && len(r.dec.Starts) >= r.s.MaxStarts
}

// budgetFailure is the memo-like failure the jobs past the budget wait
// for (its text is cached per queue, as a shape's failure is).
func (r *round) budgetFailure() *failure {
	if r.budget == nil {
		r.budget = &failure{epoch: -1, reason: BudgetReason(r.s.MaxStarts)}
	}
	return r.budget
}

// waitPastBudget writes the Waits of the queued jobs ranked from on,
// which the walk stopped before: each its own reason where it can never
// start, else the budget's.
func (r *round) waitPastBudget(from int) {
	if r.s.SkipReasons {
		return
	}
	for i := from; i < len(r.ranked); i++ {
		if r.state(i) != Queued {
			continue
		}
		if _, why := r.admission(i); why != "" {
			r.waitAt(i, why)
			continue
		}
		r.waitBudget(i)
	}
}

// waitBudget is the Wait of the queued job at rank i, past the budget.
func (r *round) waitBudget(i int) {
	if !r.s.SkipReasons { // else no text is built
		r.waitAt(i, r.budgetFailure().text(r.ranked[i].Queue, r.queued))
	}
}

// TrimStarts holds a decision made by a policy that does not walk jobs
// in rank order (optimus) to s's start budget: the starts past it are
// dropped, and those of queued jobs (queued(i): the start at index i
// admits a queued job) wait with BudgetReason; a running job whose
// resize was dropped keeps running as it is. Only a policy whose every
// start uses just what the ones before it left or freed may drop a
// suffix so: the rest then still fit.
func TrimStarts(d *Decision, s *Snapshot, queued func(i int) bool) {
	max := s.MaxStarts
	if max <= 0 || len(d.Starts) <= max {
		return
	}
	if !s.SkipReasons {
		why := BudgetReason(max)
		for i := max; i < len(d.Starts); i++ {
			if queued(i) {
				d.Waiting = append(d.Waiting, Wait{JobID: d.Starts[i].JobID, Reason: why})
			}
		}
	}
	d.Starts = d.Starts[:max]
}
