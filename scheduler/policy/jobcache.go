package policy

// jobCache is what the Framework keeps of each job of a tracked snapshot
// (Snapshot.JobGen) by position: its ID and what the walk reads of it.
// At 100,000 jobs reading every job again in rank order was a cache miss
// each, most of a decision; an unchanged job is now never read.
type jobCache struct {
	track JobTrack
	id    []string
	info  []rankInfo
	// ranking and waiting are the last Decision's slices, rewritten in
	// place by the next tracked decision (the contract of JobGen).
	ranking []Rank
	waiting Waits
}

// refresh brings the cache up to s, re-reading only the jobs whose stamp
// moved; false when s is untracked (the cache is then left alone).
func (c *jobCache) refresh(s *Snapshot, preemptive bool) bool {
	if !c.track.Update(s) {
		return false
	}
	n := len(s.Jobs)
	c.id, c.info = grow(c.id, n), grow(c.info, n)
	for i, j := range s.Jobs {
		if c.track.Same(i) {
			continue
		}
		if j == nil {
			c.id[i], c.info[i] = "", rankInfo{state: Finished}
			continue
		}
		c.id[i], c.info[i] = j.ID, infoOf(j, preemptive)
	}
	return true
}

// infoOf is what the walk reads of j (held only for preemptive
// orderings: only victims' shares are read).
func infoOf(j *Job, preemptive bool) rankInfo {
	in := rankInfo{state: j.State, workers: j.Workers, frac: j.Fraction, mem: j.MemMiB}
	if j.State == Running && preemptive {
		in.held = placementGPUs(j.Placement)
	}
	return in
}
