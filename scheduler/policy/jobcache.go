package policy

// jobCache is what the Framework keeps of a tracked snapshot's jobs
// (Snapshot.JobGen) from one round to the next: the last round's Ranking
// and walk info, in rank order, and each position's rank in it. At
// 100,000 jobs reading every job again in rank order was a cache miss
// each, and so was gathering a per-position copy in rank order; rank
// order changes little between rounds, so an unchanged job's entry is
// taken from the last round's arrays nearly in sequence, and the job
// itself is never read.
type jobCache struct {
	track JobTrack
	// lastRank[p] is the rank of the job at position p in the last
	// round (-1: not ranked); next is this round's, swapped in after
	lastRank, next []int32
	// info and ranking by rank: [cur] is the last round's, the other is
	// rewritten by this one (so a Decision's Ranking stays valid until
	// the next Decide, as JobGen's contract says)
	info    [2][]rankInfo
	ranking [2][]Rank
	cur     int
	// waiting is the last Decision's Waiting, rewritten in place
	waiting Waits
}

// refresh follows s's stamps; false when s is untracked.
func (c *jobCache) refresh(s *Snapshot) bool {
	if c.track.Update(s) {
		return true
	}
	c.lastRank = c.lastRank[:0]
	return false
}

// rank fills this round's Ranking and walk info for ranked, taking
// unchanged jobs' entries from the last round.
func (c *jobCache) rank(s *Snapshot, ranked []Ranked, at []int32, preemptive bool) ([]Rank, []rankInfo) {
	old, cur := c.cur, 1-c.cur
	oldInfo, oldRank := c.info[old], c.ranking[old]
	info, ranking := grow(c.info[cur], len(ranked)), grow(c.ranking[cur], len(ranked))
	next := grow(c.next, len(s.Jobs))
	for i := range next {
		next[i] = -1
	}
	last := c.lastRank
	for r, x := range ranked {
		p := -1
		if at != nil {
			p = int(at[r]) - 1
		}
		if p < 0 || p >= len(next) {
			ranking[r], info[r] = Rank{JobID: x.Job.ID, Queue: x.Queue}, infoOf(x.Job, preemptive)
			continue
		}
		next[p] = int32(r)
		if p < len(last) && c.track.Same(p) {
			if lr := last[p]; lr >= 0 {
				ranking[r], info[r] = Rank{JobID: oldRank[lr].JobID, Queue: x.Queue}, oldInfo[lr]
				continue
			}
		}
		ranking[r], info[r] = Rank{JobID: x.Job.ID, Queue: x.Queue}, infoOf(x.Job, preemptive)
	}
	c.info[cur], c.ranking[cur], c.cur = info, ranking, cur
	c.lastRank, c.next = next, last
	return ranking, info
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
