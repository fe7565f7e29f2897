package policy

// TrialStats counts what one Decide's preemption trials did, for the
// benchmarks that ask where a preemptive ordering's decision goes
// (scalebench reports them per decision). Counting is a few integer
// increments on the walk's goroutine; nothing decides by them.
//
// Every victim released in the Capacity is then preempted or given
// back, so Materialised equals GivenBack plus the Decision's Preempts,
// less those of replayed trials (a replay preempts without releasing).
type TrialStats struct {
	// Trials ran (tryVictims past its memo); Replayed were answered by
	// the trial memo (preempt_memo.go).
	Trials, Replayed int
	// Victims were released, virtually (a lazy trial) or in the
	// Capacity, holding VictimSlots slots between them.
	Victims, VictimSlots int
	// Materialised: victims released in the Capacity.
	Materialised int
	// GivenBack: released victims re-committed, the gang placed without
	// them or the trial failed.
	GivenBack int
	// PlacerCalls: placement attempts within trials; Counted: tests the
	// placer's fit count answered instead (preempt_fewest.go, trialTest).
	PlacerCalls, Counted int
	// Narrowed: victims the batch a gang fitted with released that it
	// did not need (the fewest lowest-ranked ones that fit are kept:
	// preempt_fewest.go), given back before the placement.
	Narrowed int
	// Fitted: trials that placed their gang at the fewest victims their
	// fit count found, without batch tests (preempt_fit.go)
	Fitted int
	// LooseSorted: running jobs a loose ranking listed out of order,
	// sorted before a trial read them (preempt_loose.go)
	LooseSorted int
}

// LastTrialStats is TrialStats of the last Decide. The victims lazy
// trials materialised are their own count's growth over the Decide
// (stats counts the eager releases), so tryVictims keeps no tally.
func (f *Framework) LastTrialStats() TrialStats {
	st := f.stats
	st.Materialised += int(f.lazy.materialised - f.lazyMat0)
	return st
}
