package policy

// JobTrack follows a tracked snapshot's JobGen (see Snapshot.JobGen) from
// one decision to the next for one user of it (the Framework, an
// ordering), so the user can keep what it derived from each job by
// position and re-read only the jobs whose stamp moved. Each user keeps
// its own: a stamp is unchanged for a user only against the snapshot that
// user last refreshed from.
type JobTrack struct {
	last []uint64
	same []bool
	// lastProgress is the last ProgressGen (UpdateWithProgress); empty
	// when the last snapshot had none
	lastProgress []uint64
	// updates counts the calls to Update and Reset: what a user kept
	// from a job at one count is Same-checked only at the next
	updates uint64
}

// Update reads s's stamps; afterwards Same(i) says whether job i is
// unchanged since the last Update. It reports whether s is tracked: for
// an untracked s nothing is the same, and the next tracked snapshot starts
// afresh. A user must refresh everything it keeps for the positions that
// are not Same before the next Update, or its cache goes stale.
func (t *JobTrack) Update(s *Snapshot) bool {
	t.updates++
	n := len(s.Jobs)
	t.same = grow(t.same, n) // with room: a growing queue reallocated it every round
	if !s.JobsTracked() {
		clear(t.same)
		t.last = t.last[:0]
		return false
	}
	// compared and remembered in one sequential pass (~0.1 ms at
	// 100,000 jobs: too short to hand parts to other goroutines)
	known := len(t.last)
	t.last = grow(t.last, n)
	t.compare(s.JobGen, known, 0, n)
	return true
}

// UpdateWithProgress is Update for a user that reads Progress or
// StepTimes: where s tracks them apart (Snapshot.ProgressGen), a job
// whose ProgressGen stamp moved is not Same either.
func (t *JobTrack) UpdateWithProgress(s *Snapshot) bool {
	if !t.Update(s) {
		t.lastProgress = t.lastProgress[:0]
		return false
	}
	if !s.ProgressTracked() {
		t.lastProgress = t.lastProgress[:0] // JobGen covers progress
		return true
	}
	known := len(t.lastProgress)
	t.lastProgress = grow(t.lastProgress, len(s.Jobs))
	last, same := t.lastProgress, t.same
	for i, g := range s.ProgressGen {
		same[i] = same[i] && g != 0 && i < known && last[i] == g
		last[i] = g
	}
	return true
}

// compare is Update's pass over the jobs [lo, hi): known stamps were kept.
func (t *JobTrack) compare(gen []uint64, known, lo, hi int) {
	last, same := t.last, t.same
	for i := lo; i < hi; i++ {
		g := gen[i]
		same[i] = g != 0 && i < known && last[i] == g
		last[i] = g
	}
}

// Same reports whether job i is unchanged since the last Update (false
// for an untracked snapshot).
func (t *JobTrack) Same(i int) bool { return t.same[i] }

// Reset forgets the last snapshot: everything is read afresh next time
// (for a user whose own derived state changed wholesale).
func (t *JobTrack) Reset() {
	t.last, t.lastProgress = t.last[:0], t.lastProgress[:0]
	t.updates++
}

// sameSince reports whether job i is unchanged since the snapshot of
// the Update counted at (t.updates then): only if that was the last one
// before this, and i is Same.
func (t *JobTrack) sameSince(i int, at uint64) bool {
	return at+1 == t.updates && i >= 0 && i < len(t.same) && t.same[i]
}

// grow resizes xs to n, keeping its contents up to n and reallocating only
// when its capacity is short.
func grow[T any](xs []T, n int) []T {
	if cap(xs) < n {
		ys := make([]T, n, n+n/8)
		copy(ys, xs)
		return ys
	}
	return xs[:n]
}
