package order

import (
	"slices"
	"strings"

	"github.com/caravan-dl/caravan/internal/split"
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// submitRanks keeps FIFO's ranking of a tracked snapshot
// (Snapshot.JobGen) from one call to the next as a list in rank order,
// and updates it by the changed positions alone: the jobs whose stamps
// moved leave it, the active ones among them are sorted and merged back
// in, and every other entry is copied in sequence. A job's FIFO key is
// its Submit, which no time passing moves, so an unchanged job keeps its
// place among the others. The general tracked path (trackedKeys, then
// sortMatched) keyed, matched and ranked every position through
// position-to-rank maps read at random, most of a churned decision at
// 100,000 jobs.
//
// The order is sortKeyed's for FIFO's keys exactly: Submit (as
// floatKey), then ID, then position. compareSubEntry does not rank a NaN
// Submit after +Inf as compareSubmit does, so a snapshot listing an
// active job with a NaN Submit is left to the general path.
type submitRanks struct {
	changeState
	// last is what ord holds of the job at each position
	last      []lastKey
	ord, next []subEntry
	adds      []subEntry
	out       []policy.Ranked
	// parts are changes' per-part lists (scratch)
	parts []partList[subEntry]
}

// changeState is what both change rankers keep by position and by rank.
type changeState struct {
	// valid: the last call ranked by changes and ord is its ranking
	valid bool
	gen   []uint64 // the last call's stamps by position
	// mark is this call's note of a changed position listed in ord
	// (scratch, cleared by merge)
	mark []uint8
	at   []int32 // RankIndexes
	// prev[r] is the rank in the last call's ranking of the job ranked r
	// now, -1 where its stamp moved (or it arrived)
	prev []int32
	// dropAt[p] is the last rank of the moved job at p (markMove: only
	// changeRanks marks one, and sizes it)
	dropAt []int32
	// olr and mparts are passParts' (scratch): each old entry's last
	// rank (dropped: it leaves) and the parts
	olr    []int32
	mparts []split.MergePart
}

// passOld is a merge's step over the last call's entry at rank i, listed
// at position pos: keep reports that it stays, lr being its last rank
// (-1: re-stamped); a moved job leaves, its last rank noted in dropAt.
// The mark is cleared.
func (c *changeState) passOld(pos, i int32) (lr int32, keep bool) {
	m := c.mark[pos]
	if m == 0 {
		return i, true
	}
	c.mark[pos] = 0
	switch m {
	case markStamp:
		return -1, true
	case markMove:
		c.dropAt[pos] = i
	}
	return 0, false
}

// begin starts a call on s: ok is false for an untracked s (nothing is
// kept), and oldN is how many positions of the last call's state are
// reusable (0: the last call did not rank by changes). gen and mark are
// sized for s; valid stays false until the call completes.
func (c *changeState) begin(s *policy.Snapshot) (oldN int, ok bool) {
	kept := c.valid
	c.valid = false
	if !s.JobsTracked() {
		return 0, false
	}
	if kept {
		oldN = len(c.gen)
	}
	n := len(s.Jobs)
	c.gen, c.mark = growKeep(c.gen, n), growKeep(c.mark, n)
	return oldN, true
}

// lastKey is a position's job as ord ranks it: listed (active), with
// its ID and Submit.
type lastKey struct {
	id     string
	sub    float64
	listed bool
}

// subEntry is one active job in rank order: its Submit and position.
type subEntry struct {
	sub float64
	pos int32
}

// rank is FIFO's order of a tracked snapshot s; ok is false where this
// path does not apply (s untracked, or an active job's Submit is NaN),
// and then nothing is kept for the next call.
func (t *submitRanks) rank(s *policy.Snapshot) (out []policy.Ranked, ok bool) {
	oldN, ok := t.begin(s)
	if !ok {
		return nil, false
	}
	if oldN == 0 {
		t.ord = t.ord[:0]
	}
	t.last = growKeep(t.last, len(s.Jobs))
	adds, nan := t.changes(s, oldN)
	if nan {
		return nil, false
	}
	t.merge(s, adds)
	t.valid = true
	return t.ranked(s), true
}

// changes compares the stamps and marks each changed position ord
// lists; it lists, sorted, the active jobs at changed positions that
// take a new place (nan: one of them has a NaN Submit). A job re-stamped
// with the same ID and Submit (a running job's progress, say) keeps its
// place: FIFO's key is those and its position. At 100,000 jobs the pass
// runs in parts of positions side by side (listParts): a part writes
// only its own positions' state and its own list, and the joined lists
// are sorted by compareSubEntry, a total order.
func (t *submitRanks) changes(s *policy.Snapshot, oldN int) (adds []subEntry, nan bool) {
	adds, nan = listParts(len(s.Jobs), &t.parts, t.adds, func(lo, hi int, buf []subEntry) ([]subEntry, bool) {
		return t.changesIn(s, oldN, lo, hi, buf)
	})
	slices.SortFunc(adds, func(a, b subEntry) int { return compareSubEntry(s, a, b) })
	t.adds = adds
	return adds, nan
}

// changesIn is changes' pass over the positions [lo, hi), appending the
// jobs that take a new place to adds, unsorted.
func (t *submitRanks) changesIn(s *policy.Snapshot, oldN, lo, hi int, adds []subEntry) (_ []subEntry, nan bool) {
	stamps, gen, last, mark := s.JobGen, t.gen, t.last, t.mark
	for p := lo; p < hi; p++ {
		j, g := s.Jobs[p], stamps[p]
		if p < oldN && g != 0 && gen[p] == g {
			continue
		}
		gen[p], mark[p] = g, 0 // (a mark left by a call that gave up)
		was := p < oldN && last[p].listed
		if isActive(j) {
			if j.Submit != j.Submit {
				nan = true
			}
			if was && last[p].sub == j.Submit && last[p].id == j.ID {
				mark[p] = markStamp
				continue
			}
			last[p] = lastKey{id: j.ID, sub: j.Submit, listed: true}
			adds = append(adds, subEntry{sub: j.Submit, pos: int32(p)})
		} else {
			last[p] = lastKey{}
		}
		if was {
			mark[p] = markDrop
		}
	}
	return adds, nan
}

// merge writes next = ord without the dropped entries, with adds merged
// in, and records each kept entry's last rank; next becomes ord.
func (t *submitRanks) merge(s *policy.Snapshot, adds []subEntry) {
	if w := workers(len(t.ord)); w > 1 {
		t.mergePar(s, adds, w)
		return
	}
	size := len(t.ord) + len(adds)
	next, prev := slices.Grow(t.next[:0], size), slices.Grow(t.prev[:0], size)
	n := int32(len(s.Jobs))
	a := 0
	for i, e := range t.ord {
		if e.pos >= n {
			continue // the list shrank: this job is gone
		}
		lr, keep := t.passOld(e.pos, int32(i))
		if !keep {
			continue
		}
		for a < len(adds) && compareSubEntry(s, adds[a], e) < 0 {
			next, prev = append(next, adds[a]), append(prev, -1)
			a++
		}
		next, prev = append(next, e), append(prev, lr)
	}
	for ; a < len(adds); a++ {
		next, prev = append(next, adds[a]), append(prev, -1)
	}
	t.ord, t.next, t.prev = next, t.ord, prev
}

// mergePar is merge over w parts of the last ranking, in the two phases
// of changeRanks.mergePar: passParts passes the old entries and counts
// those that stay, split.PlaceAdds finds each part's adds and output
// offset, and each part writes its own ranks. The result is the serial
// merge's.
func (t *submitRanks) mergePar(s *policy.Snapshot, adds []subEntry, w int) {
	ord := t.ord
	olr, parts := t.passParts(len(ord), int32(len(s.Jobs)), w, func(i int) int32 { return ord[i].pos })
	keptAll, addsAt := split.PlaceAdds(parts, len(adds), func(a, last int) bool {
		return compareSubEntry(s, adds[a], ord[last]) >= 0
	})
	next, prev := grow(t.next, keptAll+len(adds)), grow(t.prev, keptAll+len(adds))
	forRanges(len(ord), w, func(k, lo, hi int) {
		pa := &parts[k]
		o, a := pa.Out, pa.Lo
		for i := lo; i < hi; i++ {
			if olr[i] == dropped {
				continue
			}
			for ; a < pa.Hi && compareSubEntry(s, adds[a], ord[i]) < 0; a, o = a+1, o+1 {
				next[o], prev[o] = adds[a], -1
			}
			next[o], prev[o] = ord[i], olr[i]
			o++
		}
	})
	for a, o := addsAt, keptAll+addsAt; a < len(adds); a, o = a+1, o+1 {
		next[o], prev[o] = adds[a], -1
	}
	t.ord, t.next, t.prev = next, t.ord, prev
}

// ranked writes the Ranking and each rank's position (RankIndexes) from
// ord: the *Job of an unchanged position may still be a new pointer.
// Each rank reads its job's pointer (a miss at 100,000 jobs), so parts
// run side by side.
func (t *submitRanks) ranked(s *policy.Snapshot) []policy.Ranked {
	out, at := grow(t.out, len(t.ord)), grow(t.at, len(t.ord))
	t.out, t.at = out, at
	if w := workers(len(out)); w > 1 {
		forRanges(len(out), w, func(_, lo, hi int) { t.rankedRange(s, lo, hi) })
	} else {
		t.rankedRange(s, 0, len(out))
	}
	return out
}

// rankedRange is ranked's pass over the ranks [lo, hi).
func (t *submitRanks) rankedRange(s *policy.Snapshot, lo, hi int) {
	out, at, jobs := t.out, t.at, s.Jobs
	for r := lo; r < hi; r++ {
		e := t.ord[r]
		out[r] = policy.Ranked{Job: jobs[e.pos]}
		at[r] = e.pos + 1
	}
}

// compareSubEntry is compareKeyed then position for FIFO's keys of the
// jobs at a and b (neither Submit NaN): Submit, then ID, then position.
// Only an exact tie of Submits reads the jobs.
func compareSubEntry(s *policy.Snapshot, a, b subEntry) int {
	if x, y := floatKey(a.sub), floatKey(b.sub); x != y {
		if x < y {
			return -1
		}
		return 1
	}
	// equal keys of numbers are equal Submits (-0 and +0 alike)
	if c := strings.Compare(s.Jobs[a.pos].ID, s.Jobs[b.pos].ID); c != 0 {
		return c
	}
	return cmpInt(int(a.pos), int(b.pos))
}

// forget drops the kept ranking: the next call ranks every job.
func (c *changeState) forget() { c.valid = false }
