package sim

// Snapshot.JobGen for the simulator's snapshots: snapGen[i] stamps
// snapJobs[i]. Between two decisions the engine changes only jobs that
// were running at the last snapshot (a preemption applied after it) or
// ran after the last decision was applied (service, progress, finishes,
// explorer evictions); queued jobs stay untouched until they start.
// So every job running at a decision's snapshot or after its apply is
// marked, and stamped afresh when the next snapshot is built; arrivals
// and compaction (jobs move) take fresh stamps for their positions.

// markRunning marks every running job for a fresh stamp at the next
// snapshot.
func (e *engine) markRunning() {
	for _, j := range e.run {
		if !j.dirty {
			j.dirty = true
			e.dirty = append(e.dirty, j)
		}
	}
}

// stampDirty gives every marked job still listed a fresh stamp.
func (e *engine) stampDirty() {
	for _, j := range e.dirty {
		j.dirty = false
		if j.pos < len(e.snapJobs) && e.snapJobs[j.pos] == &j.pj {
			e.stamp++
			e.snapGen[j.pos] = e.stamp
		}
	}
	e.dirty = e.dirty[:0]
}

// listed appends j to the snapshot's jobs with a fresh stamp.
func (e *engine) listed(j *simJob) {
	j.pos = len(e.snapJobs)
	e.snapJobs = append(e.snapJobs, &j.pj)
	e.stamp++
	e.snapGen = append(e.snapGen, e.stamp)
}
