package policy

// jobCache is what the Framework keeps of a tracked snapshot's jobs
// (Snapshot.JobGen) from one round to the next: the last round's IDs
// and walk info, in rank order, and each position's rank in it. At
// 100,000 jobs reading every job again in rank order was a cache miss
// each, and so was gathering a per-position copy in rank order; rank
// order changes little between rounds, so an unchanged job's entry is
// taken from the last round's arrays nearly in sequence, and the job
// itself is never read.
type jobCache struct {
	track JobTrack
	// pos[p] is the rank of the job at position p in the last round and
	// in this one, side by side: the rank pass reads one and writes the
	// other at each position, one cache line instead of two (positions
	// come in rank order, at random). ranked is how many positions the
	// last rank call ranked (0: none to reuse).
	pos    []posRank
	ranked int
	// info by rank (with each job's ID, so an unchanged job's entry is
	// one random read): [cur] is the last round's, the other is
	// rewritten by this one; the Decision's Ranking is written from it
	// and never read back, so a caller that edits it harms nothing
	info    [2][]rankInfo
	cur     int
	ranking []Rank
	// waiting is the last Decision's Waiting, rewritten in place
	waiting Waits
	// changed lists the ranks whose jobs rank reads, stale the unchanged
	// running ones whose guard it asks again (scratch)
	changed, stale []int32
	// parts are rank's per-part lists, joined into changed and stale
	parts []rankPart
	// prepared: pos is ready for this round's rank
	prepared bool
	// pass is rank's unchanged-job pass (kept here: a local the parts
	// share would be allocated every round)
	pass rankPass
	// guarded is this round's PreemptionGuard answer for each running
	// job by rank (nil: not kept); guard is its storage
	guarded, guard []bool
	// gates are a GuardHorizon's answers by rank, [cur] this round's (as
	// info); gated: the last round kept them
	gates [2][]gate
	gated bool
	// byPrev: the last rank call copied by the ordering's PrevRanks
	// (pos was not kept); kept: the last round's entries (info by
	// rank) are the last rank call's; calls: the ordering's Order count
	// then
	byPrev, kept bool
	calls        uint64
	// lrs is copyUnchanged's storage
	lrs []int32
	// followed counts the re-ranks followed by the ordering's map
	// (permuteBy; for tests)
	followed int
}

// refresh follows s's stamps and prepares rank; false when s is
// untracked.
func (c *jobCache) refresh(s *Snapshot) bool {
	c.prepared = false
	if c.track.Update(s) {
		c.prepare(len(s.Jobs))
		return true
	}
	c.ranked, c.kept = 0, false
	return false
}

// gate is a GuardHorizon's answer about a running job, which holds
// while Now is before until and the job is unchanged.
type gate struct {
	until Seconds
	ok    bool
}

// posRank is one position's rank in the last round and in this one (-1:
// not ranked, or changed since).
type posRank struct {
	last, next int32
}

// rank fills this round's Ranking and walk info for ranked, taking
// unchanged jobs' entries from the last round.
//
// With a guard (a preemptive ordering's PreemptionGuard) it also answers
// CanPreempt for every running job (c.guarded, by rank), so the victim
// index does not read each running job once more in rank order.
//
// Its passes are cut into fixed parts run side by side (split) at
// 100,000 jobs: each part writes only its own ranks' slots (and next at
// its ranks' positions, distinct as RankIndexer promises), and its lists
// of changed and stale ranks are joined in part order, so everything is
// what one serial pass writes. The guard is asked serially, in the serial
// order (it is the ordering's code), unless it is a ConcurrentGuard:
// then in the parts, each answer written at its own rank.
func (c *jobCache) rank(s *Snapshot, ranked []Ranked, at []int32, pr PrevRanker, preemptive bool, guard PreemptionGuard) ([]Rank, []rankInfo) {
	old, cur := c.cur, 1-c.cur
	oldInfo := c.info[old]
	info := grow(c.info[cur], len(ranked))
	var ranking []Rank // none without reasons (skipRanking)
	if !skipRanking(s) {
		ranking = grow(c.ranking, len(ranked))
		c.ranking = ranking
	}
	if !c.prepared || len(c.pos) != len(s.Jobs) {
		c.prepare(len(s.Jobs))
	}
	c.prepared = false
	k := splitParts(len(ranked))
	c.parts = grow(c.parts, k)
	c.guarded = nil
	var ok []bool
	if guard != nil && preemptive {
		ok = grow(c.guard, len(ranked))
		c.guard, c.guarded = ok, ok
	}
	// a GuardHorizon's answers are kept by rank beside the info: an
	// unchanged running job's holds until its bound, without reading it
	var horizon GuardHorizon
	var gates []gate
	if ok != nil {
		if horizon = guardHorizon(guard); horizon != nil {
			gates = grow(c.gates[cur], len(ranked))
			c.gates[cur] = gates
		}
	}
	c.pass = rankPass{ranked: ranked, at: at, ranking: ranking, info: info,
		oldInfo: oldInfo, guarded: guard != nil, ok: ok, gates: gates, now: s.Now}
	if horizon != nil && c.gated {
		c.pass.oldGates = c.gates[old]
	}
	c.pass.prev, c.byPrev = c.prevRanks(pr, len(ranked), c.kept)
	if !c.byPrev {
		c.lrs = grow(c.lrs, len(ranked))
		c.pass.lrs = c.lrs
	}
	if k > 1 { // no closure on the serial path (a replay decides ~200,000 times)
		split(len(ranked), k, func(part, lo, hi int) {
			c.parts[part] = c.copyPart(lo, hi, c.parts[part])
		})
	} else {
		c.parts[0] = c.copyPart(0, len(ranked), c.parts[0])
	}
	c.pass = rankPass{} // holds no job past the round
	changed, stale := c.changed[:0], c.stale[:0]
	for i := range c.parts {
		changed = append(changed, c.parts[i].changed...)
		stale = append(stale, c.parts[i].stale...)
	}
	// the changed jobs (every running job, every round), in a pass of
	// their own: its iterations are short and independent, so the
	// processor overlaps more of their cache misses than it could
	// between the unchanged jobs' copies. A ConcurrentGuard is asked in
	// it, and for the stale jobs in parts of their own
	rc := changedRead{ranked: ranked, ranking: ranking, info: info, preemptive: preemptive, ok: ok, now: s.Now,
		horizon: horizon, gates: gates, s: s, at: at}
	if ok != nil {
		rc.guard = concurrentGuard(guard)
	}
	if k := splitPartsOf(len(changed), readSplitMin()); k > 1 {
		split(len(changed), k, func(_, lo, hi int) { rc.read(changed[lo:hi]) })
	} else {
		rc.read(changed)
	}
	switch {
	case rc.guard != nil && splitParts(len(stale)) > 1:
		split(len(stale), splitParts(len(stale)), func(_, lo, hi int) { rc.ask(stale[lo:hi]) })
	case rc.guard != nil:
		rc.ask(stale)
	case ok != nil: // the ordering's code, asked serially in rank order
		for _, r := range changed {
			if JobState(info[r].state) == Running {
				ok[r] = guard.CanPreempt(jobOf(s, ranked, at, int(r)), s.Now)
			}
		}
		for _, r := range stale { // unchanged, but the guard moves with Now
			ok[r] = guard.CanPreempt(jobOf(s, ranked, at, int(r)), s.Now)
		}
	}
	c.changed, c.stale = changed, stale
	c.info[cur], c.cur = info, cur
	c.gated = horizon != nil
	c.ranked = len(c.pos)
	if c.byPrev {
		c.ranked = 0 // pos was not kept: a next round by position reads all
	}
	c.kept = true
	return ranking, info
}

// prevRanks is the ordering's last-rank map when it applies to this
// round: the ordering keeps one (PrevRanker), for as many ranks, and its
// previous Order call was this cache's last rank call (kept: the last
// round's entries are that call's). ok is false otherwise.
func (c *jobCache) prevRanks(pr PrevRanker, n int, kept bool) (prev []int32, ok bool) {
	if pr == nil {
		return nil, false
	}
	prev, calls := pr.PrevRanks()
	last := c.calls
	c.calls = calls
	if !kept || calls != last+1 || len(prev) != n {
		return nil, false
	}
	return prev, true
}

// copyPart is rank's pass over the ranks [lo, hi): by the ordering's
// last-rank map where it applies (an unchanged job's entry is read from
// its last rank, which follows the rank order, so the reads run in
// sequence), else by position.
func (c *jobCache) copyPart(lo, hi int, lists rankPart) rankPart {
	if c.byPrev {
		return c.copyFrom(&c.pass, c.pass.prev, lo, hi, lists)
	}
	return c.copyUnchanged(&c.pass, lo, hi, lists)
}

// copyFrom copies the ranks [lo, hi) whose last rank prev gives.
func (c *jobCache) copyFrom(ps *rankPass, prev []int32, lo, hi int, lists rankPart) rankPart {
	ranking, info, oldInfo := ps.ranking, ps.info, ps.oldInfo
	changed, stale := lists.changed[:0], lists.stale[:0]
	for r := lo; r < hi; r++ {
		if lr := prev[r]; lr >= 0 && int(lr) < len(oldInfo) {
			info[r] = oldInfo[lr]
			if ranking != nil {
				ranking[r] = Rank{JobID: info[r].id, Queue: ps.ranked[r].Queue}
			}
			if ps.guarded && JobState(info[r].state) == Running && !ps.keepGate(r, lr) {
				stale = append(stale, int32(r)) // its guard moves with Now
			}
			continue
		}
		changed = append(changed, int32(r))
	}
	return rankPart{changed: changed, stale: stale}
}

// prepare readies rank's positions for n jobs after refresh (in
// newRound, beside the ordering): in list order, each position's last
// rank is the one the last rank call gave it, void where the job changed
// (so rank reads one array by position, not two), and no position has a
// rank in this round yet.
func (c *jobCache) prepare(n int) {
	known := c.ranked
	c.pos, c.prepared, c.ranked = grow(c.pos, n), true, 0
	c.shiftRanks(known, 0, n) // sequential, ~0.1 ms at 100,000 jobs: not split
}

// shiftRanks is prepare's pass over the positions [lo, hi) (known: how
// many the last rank call ranked).
func (c *jobCache) shiftRanks(known, lo, hi int) {
	pos := c.pos
	for p := lo; p < hi; p++ {
		e := &pos[p]
		if p < known && c.track.Same(p) {
			e.last = e.next
		} else {
			e.last = -1
		}
		e.next = -1
	}
}

// rankPart is one part's lists of rank's unchanged-job pass: the ranks
// whose jobs must be read, and the unchanged running ones whose guard is
// asked again.
type rankPart struct {
	changed, stale []int32
}

// rankPass is what rank's unchanged-job pass reads and writes.
type rankPass struct {
	ranked  []Ranked
	at      []int32
	ranking []Rank
	info    []rankInfo
	oldInfo []rankInfo
	guarded bool
	prev    []int32 // the ordering's last-rank map (copyPart)
	lrs     []int32 // copyUnchanged's last ranks, by rank
	// ok and gates are this round's guard answers by rank; oldGates, the
	// last round's GuardHorizon answers (nil: none kept), hold before now
	ok              []bool
	gates, oldGates []gate
	now             Seconds
}

// keepGate copies the last round's guard answer about the unchanged running
// job now at rank r (last at lr) where it still holds; false: the guard
// must be asked again (its answer moves with Now).
func (ps *rankPass) keepGate(r int, lr int32) bool {
	if ps.oldGates == nil || int(lr) >= len(ps.oldGates) {
		return false
	}
	g := ps.oldGates[lr]
	if !(ps.now < g.until) {
		return false
	}
	ps.gates[r], ps.ok[r] = g, g.ok
	return true
}

// copyUnchanged is rank's pass over the ranks [lo, hi): an unchanged
// job's entry is copied from the last round's, the others are listed as
// changed (stale: the unchanged running ones, when guarded).
func (c *jobCache) copyUnchanged(ps *rankPass, lo, hi int, lists rankPart) rankPart {
	pos, at, lrs := c.pos, ps.at, ps.lrs[lo:hi]
	for k := range lrs {
		lrs[k] = -1
	}
	if at != nil {
		// first each rank's last rank, a loop of independent reads whose
		// misses overlap; then the copies, in sequence
		for r := lo; r < hi; r++ {
			if p := int(at[r]) - 1; p >= 0 && p < len(pos) {
				e := &pos[p]
				e.next, lrs[r-lo] = int32(r), e.last
			}
		}
	}
	return c.copyFrom(ps, ps.lrs, lo, hi, lists)
}

// jobOf is the job ranked r: ranked's, or where an IndexOrderer left it
// nil, the one RankIndexes (at) says is listed there.
func jobOf(s *Snapshot, ranked []Ranked, at []int32, r int) *Job {
	if j := ranked[r].Job; j != nil {
		return j
	}
	return s.Jobs[at[r]-1]
}

// changedRead is what rank's changed-job pass reads and writes.
type changedRead struct {
	ranked []Ranked
	// s and at find a rank's job where the ordering left it to the
	// Framework (jobOf)
	s          *Snapshot
	at         []int32
	ranking    []Rank
	info       []rankInfo
	preemptive bool
	// guard, unless nil, is a ConcurrentGuard asked for every running
	// job read, and by ask, into ok (by rank)
	guard PreemptionGuard
	ok    []bool
	now   Seconds
	// horizon, unless nil, is the guard as a GuardHorizon, whose answers
	// are kept in gates (by rank)
	horizon GuardHorizon
	gates   []gate
}

// read reads the jobs at ranks rs into the Ranking and walk info, with a
// running job's GPU share for a preemptive ordering (its slots are one
// more miss each, which only the victim index needs).
func (rc *changedRead) read(rs []int32) {
	ranked, ranking, info := rc.ranked, rc.ranking, rc.info
	for _, r := range rs {
		x := &ranked[r]
		j := jobOf(rc.s, ranked, rc.at, int(r))
		info[r].setJob(j)
		if ranking != nil {
			ranking[r] = Rank{JobID: j.ID, Queue: x.Queue}
		}
		if rc.preemptive && j.State == Running {
			info[r].held = j.Placement.GPUs()
			if rc.guard != nil {
				rc.ok[r] = rc.askJob(r, j)
			}
		}
	}
}

// readSplitMin is the fewest changed jobs a part of rank's changed-job
// pass gets: each is several cache misses (the job, its ID, its
// placement), ~200 ns, so a part of a thousand outweighs its hand-off,
// where splitMin is sized for passes of a few nanoseconds an item. fifo
// re-reads ~6,000 re-stamped jobs a decision at 100,000 jobs, which
// splitMin kept on one core.
func readSplitMin() int { return max(splitMin/8, 1) }

// ask asks the guard about the unchanged running jobs at ranks rs (its
// answer moves with Now).
func (rc *changedRead) ask(rs []int32) {
	for _, r := range rs {
		rc.ok[r] = rc.askJob(r, jobOf(rc.s, rc.ranked, rc.at, int(r)))
	}
}

// askJob asks the guard about the running job j at rank r, keeping a
// GuardHorizon's answer for the next rounds.
func (rc *changedRead) askJob(r int32, j *Job) bool {
	if rc.horizon == nil {
		return rc.guard.CanPreempt(j, rc.now)
	}
	ok, until := rc.horizon.GuardUntil(j, rc.now)
	rc.gates[r] = gate{until: until, ok: ok}
	return ok
}

// permute re-orders what the last round kept by rank (info, IDs, a
// GuardHorizon's answers) to the ordering's re-ranking of the same jobs
// (OrderPreparer): at[r] is 1 + the position of the job now ranked r.
// The next round then finds each unchanged job at its new rank, as if
// the last round had ranked them so. Anything else forgets the ranks
// (the next round reads every job): a last round not ranked by position,
// or a ranking of other jobs.
func (c *jobCache) permute(at []int32) {
	old := c.cur
	n := len(at)
	if !c.kept || c.byPrev || c.ranked != len(c.pos) || n != len(c.info[old]) {
		c.forgetRanks()
		return
	}
	lrs := grow(c.lrs, n)
	c.lrs = lrs
	for r, a := range at {
		p := int(a) - 1
		if p < 0 || p >= len(c.pos) || c.pos[p].next < 0 {
			c.forgetRanks()
			return
		}
		lrs[r] = c.pos[p].next
	}
	for r, a := range at {
		c.pos[a-1].next = int32(r)
	}
	c.follow(lrs)
}

// permuteBy is permute for a PrevRanker's re-rank: prev[r] is the rank,
// in the last round, of the job now ranked r, and calls the ordering's
// count with the re-rank (PrevRanks). It applies where the last round
// was the ordering's call before it and prev carries every rank; else
// the ranks are forgotten. The next round then copies by the ordering's
// map (pos, not permuted, is not kept).
func (c *jobCache) permuteBy(prev []int32, calls uint64) {
	n := len(prev)
	if !c.kept || calls != c.calls+1 || n != len(c.info[c.cur]) {
		c.forgetRanks()
		return
	}
	for _, lr := range prev {
		if lr < 0 || int(lr) >= n {
			c.forgetRanks()
			return
		}
	}
	c.follow(prev)
	c.calls, c.ranked = calls, 0
	c.followed++
}

// follow re-orders what the last round kept by rank, so that rank r
// holds what rank lrs[r] held.
func (c *jobCache) follow(lrs []int32) {
	old, n := c.cur, len(lrs)
	cur := 1 - old
	info, oldInfo := grow(c.info[cur], n), c.info[old]
	for r, lr := range lrs {
		info[r] = oldInfo[lr]
	}
	if c.gated {
		gates, oldGates := grow(c.gates[cur], n), c.gates[old]
		for r, lr := range lrs {
			gates[r] = oldGates[lr]
		}
		c.gates[cur] = gates
	}
	c.info[cur], c.cur = info, cur
}

// forgetRanks drops the last round's ranks (a round ranked without
// them): the next round reads every job.
func (c *jobCache) forgetRanks() {
	c.ranked, c.prepared, c.byPrev, c.kept, c.gated = 0, false, false, false, false
}
