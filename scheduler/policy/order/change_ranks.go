package order

import (
	"math"
	"slices"
	"strings"

	"github.com/caravan-dl/caravan/internal/split"
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// changeRanks is submitRanks for an ordering with a key function and a
// mover (2D-LAS, SRTF; FIFO keeps its own: its 16-byte entries, against
// 40 here, cost it ~3 ms less CPU a decision at 100,000 jobs): its ranking of a tracked snapshot
// (Snapshot.JobGen) is kept in rank order and updated by what changed.
// A changed job is keyed again; an unchanged accruing job is re-keyed
// by the mover from what was kept of it (its service moved with Now);
// a job whose key, ID and Submit all stay (2D-LAS: a running job that
// stays in its queue) keeps its place, and the others leave and are
// merged back in. The order is sortKeyed's exactly: queue, the keys (as
// floatKey), Submit, ID, position. Like submitRanks it leaves snapshots
// listing an active job with a NaN Submit to the general path.
type changeRanks struct {
	changeState
	// key is each position's key as ord ranks it (ksAt ≥ 0: listed),
	// id and sub its job's tie-breaks
	key  []posKey
	id   []string
	sub  []float64
	accr []bool   // its job accrues: re-keyed by the mover
	acc  []accKey // what the mover needs of it
	// until is the latest Now at which its key cannot move (mover.until;
	// −Inf: re-keyed every call)
	until []float64
	ord   []rankEntry
	next  []rankEntry
	adds  []addEntry
	parts []partList[addEntry] // changes' per-part lists (scratch)
	out   []policy.Ranked
	// movedAt: the ranks merge placed moved jobs at; partMoved:
	// mergePar's parts' (scratch)
	movedAt   []int32
	partMoved [][]int32
	// sortAdds' scratch: each moved position's index in adds, the moved
	// entries in last rank order and the others; nearly counts the calls
	// whose moved entries were nearly sorted, kept those that took them
	// in the order keepMoved kept (tests)
	slot          []int32
	byRank, fresh []addEntry
	nearly, kept  int
	// movedOrd: the accruing jobs' positions in the last call's sorted
	// adds (keepMoved)
	movedOrd []int32
	// lazy: leave the ranking's jobs to the caller (OrderIndexed)
	lazy bool
	// final, where set, is the key a position ranks by, from its kept
	// key (2D-Gittins keeps a queued job's service and ranks by its
	// index); it must be safe to call concurrently
	final func(e *posKey) [3]float64
}

// marks of changed positions that ord lists
const (
	markDrop  = 1 + iota // its job left or took another key
	markStamp            // same key, new stamp: its place holds
	// markMove: an unchanged job whose key moved with Now (an accruing
	// job's): it leaves and is merged back in, but the Framework may
	// still copy what it kept of it, from its last rank
	markMove
)

// addEntry is an entry to merge in; moved: its job is unchanged
// (markMove).
type addEntry struct {
	rankEntry
	moved bool
}

// rankEntry is one active job in rank order: its key, as the integers
// floatKey maps it to (compared as they are), and its position.
type rankEntry struct {
	k     [3]uint64
	queue int32
	pos   int32
}

// rank is the ordering's ranking of a tracked s (key and mv as the
// ordering's keyCache has them); ok is false where this path does not
// apply, and then nothing is kept.
func (t *changeRanks) rank(s *policy.Snapshot, key func(*policy.Job) keyed, mv mover) (out []policy.Ranked, ok bool) {
	oldN, ok := t.begin(s)
	if !ok {
		return nil, false
	}
	if oldN == 0 {
		t.ord = t.ord[:0]
	}
	n := len(s.Jobs)
	t.key, t.id, t.sub = growKeep(t.key, n), growKeep(t.id, n), growKeep(t.sub, n)
	t.accr, t.acc, t.until = growKeep(t.accr, n), growKeep(t.acc, n), growKeep(t.until, n)
	adds, nan := t.changes(s, oldN, key, mv)
	if nan {
		return nil, false
	}
	t.merge(len(s.Jobs), adds)
	t.valid = true
	return t.ranked(s), true
}

// changes compares the stamps, re-keys changed and accruing jobs, marks
// the listed positions whose job leaves or moves (markDrop) or keeps its
// place under a new stamp (markStamp), and returns the active jobs that
// take a new place, sorted.
//
// At 100,000 jobs the pass is split into parts of positions run side by
// side (forRanges): a re-keyed job is a cache miss, 2D-LAS re-keys
// ~18,000 a churned decision (running jobs report progress), and the
// serial pass was most of its ranking, on the decision's path. A part
// writes only its own positions' state and its own list; the lists are
// joined in part order and sorted by compare, a total order, so
// the result is the serial pass's.
func (t *changeRanks) changes(s *policy.Snapshot, oldN int, key func(*policy.Job) keyed, mv mover) (adds []addEntry, nan bool) {
	adds, nan = listParts(len(s.Jobs), &t.parts, t.adds, func(lo, hi int, buf []addEntry) ([]addEntry, bool) {
		return t.changesIn(s, oldN, lo, hi, key, mv, buf)
	})
	if !nan {
		adds = t.sortAdds(len(s.Jobs), adds)
	}
	t.adds = adds
	return adds, nan
}

// changesIn is changes' pass over the positions [lo, hi), appending the
// jobs that take a new place to adds, unsorted.
func (t *changeRanks) changesIn(s *policy.Snapshot, oldN, lo, hi int, key func(*policy.Job) keyed, mv mover, adds []addEntry) (_ []addEntry, nan bool) {
	stamps := s.JobGen
	for p := lo; p < hi; p++ {
		g := stamps[p]
		if p < oldN && g != 0 && t.gen[p] == g {
			if !t.accr[p] {
				continue
			}
			var read bool
			if adds, read = t.accrue(s, p, adds, mv); !read {
				continue
			}
		}
		j := s.Jobs[p] // read only here: an unchanged job's pointer is not needed
		t.gen[p], t.mark[p] = g, 0
		if t.rekey(p, oldN, j, key, mv) {
			if j.Submit != j.Submit {
				nan = true
			}
			adds = append(adds, addEntry{rankEntry: t.entry(p)})
		}
	}
	return adds, nan
}

// accrue re-keys the unchanged accruing job at p by the mover: a key
// that moved marks p to drop and lists it anew. read: the mover could
// not, so the job must be read (rekey).
//
// A moved key leaves and is merged back in: SRTF's running jobs all
// move every call, so this path saves it less than it saves 2D-LAS,
// whose running jobs move only when they change queue.
func (t *changeRanks) accrue(s *policy.Snapshot, p int, adds []addEntry, mv mover) (out []addEntry, read bool) {
	// until first: most accruing jobs hold their key (2D-LAS' running
	// jobs stay in their queue), and then the 32-byte key is not read
	if s.Now <= t.until[p] || t.key[p].ksAt < 0 {
		return adds, false // its key cannot have moved yet, or not active
	}
	e, a := &t.key[p], &t.acc[p]
	at, ex := a.acc.At(s.Now, a.attained, a.executed)
	// moved in place (a move that fails changes nothing): a copy's
	// address handed to the mover escaped, a heap allocation per job
	old := *e
	if !mv.move(p, e, a.aux, at, ex) {
		return adds, true
	}
	if sameKeyBits(&old, e) {
		return adds, false
	}
	t.until[p] = mv.holds(e, a)
	t.mark[p] = markMove
	return append(adds, addEntry{rankEntry: t.entry(p), moved: true}), false
}

// rekey reads the job at p (its stamp moved, or the mover could not):
// it reports whether the job takes a new place (to be merged in), having
// marked p's old entry to drop or, for the same key and job, to keep
// its place.
func (t *changeRanks) rekey(p, oldN int, j *policy.Job, key func(*policy.Job) keyed, mv mover) bool {
	e := &t.key[p]
	was := p < oldN && e.ksAt >= 0
	t.accr[p] = false
	if !isActive(j) {
		e.ksAt = -1
		if was {
			t.mark[p] = markDrop
		}
		return false
	}
	k := key(j)
	nk := posKey{k: k.k, queue: k.queue}
	accrues := j.Accrues() && mv.move != nil
	if accrues {
		t.accr[p] = true
		t.acc[p] = accKey{acc: j.Accrual, attained: j.Attained, executed: j.Executed}
		if mv.aux != nil {
			t.acc[p].aux = mv.aux(j)
		}
	}
	same := was && sameKeyBits(&nk, e) && t.id[p] == j.ID && math.Float64bits(t.sub[p]) == math.Float64bits(j.Submit)
	if !same {
		*e = nk
	}
	if accrues { // e's key is nk's, bit for bit
		// asked of the kept key and accrual: addresses of copies handed
		// to the mover's until escaped, two heap allocations a job
		t.until[p] = mv.holds(e, &t.acc[p])
	}
	if same {
		t.mark[p] = markStamp
		return false
	}
	t.id[p], t.sub[p] = j.ID, j.Submit
	if was {
		t.mark[p] = markDrop
	}
	return true
}

// rerank re-places, between calls, the listed positions whose final
// key moved though their jobs did not (moved reports them, from their
// kept keys; 2D-Gittins' queued jobs under a learnt sample): each leaves
// and is merged back in at its new key as a moved job (markMove), so the
// map (prev) carries every rank. The ranking is written leaving its jobs
// out: the snapshot may have moved on, and nothing reads them before the
// next call.
func (t *changeRanks) rerank(moved func(e *posKey) bool) {
	n := len(t.gen)
	adds := t.adds[:0]
	for p := range n {
		if e := &t.key[p]; e.ksAt >= 0 && moved(e) {
			t.mark[p] = markMove
			adds = append(adds, addEntry{rankEntry: t.entry(p), moved: true})
		}
	}
	adds = t.sortAdds(n, adds)
	t.adds = adds
	t.merge(n, adds)
	defer func(lazy bool) { t.lazy = lazy }(t.lazy)
	t.lazy = true
	t.ranked(nil)
}

// entry is position p's entry as its key now stands.
func (t *changeRanks) entry(p int) rankEntry {
	e := &t.key[p]
	e.ksAt = 0 // listed
	k := e.k
	if t.final != nil {
		k = t.final(e)
	}
	return rankEntry{k: [3]uint64{floatKey(k[0]), floatKey(k[1]), floatKey(k[2])}, queue: e.queue, pos: int32(p)}
}

// sameKeyBits reports identical keys, bit for bit.
func sameKeyBits(a, b *posKey) bool {
	return a.queue == b.queue && math.Float64bits(a.k[0]) == math.Float64bits(b.k[0]) &&
		math.Float64bits(a.k[1]) == math.Float64bits(b.k[1]) && math.Float64bits(a.k[2]) == math.Float64bits(b.k[2])
}

// merge is submitRanks.merge for keyed entries; a moved job's last
// rank is known once its old entry is passed, so its prev is filled in
// after. At 100,000 jobs it runs in parts side by side (mergePar).
func (t *changeRanks) merge(listed int, adds []addEntry) {
	t.dropAt = growKeep(t.dropAt, listed)
	if w := workers(len(t.ord)); w > 1 {
		t.mergePar(listed, adds, w)
		return
	}
	size := len(t.ord) + len(adds)
	next, prev := slices.Grow(t.next[:0], size), slices.Grow(t.prev[:0], size)
	moved := t.movedAt[:0]
	n := int32(listed)
	a := 0
	for i, e := range t.ord {
		if e.pos >= n {
			continue // the list shrank: this job is gone
		}
		lr, keep := t.passOld(e.pos, int32(i))
		if !keep {
			continue
		}
		for a < len(adds) && t.compare(&adds[a].rankEntry, &e) < 0 {
			if adds[a].moved {
				moved = append(moved, int32(len(next)))
			}
			next, prev = append(next, adds[a].rankEntry), append(prev, -1)
			a++
		}
		next, prev = append(next, e), append(prev, lr)
	}
	for ; a < len(adds); a++ {
		if adds[a].moved {
			moved = append(moved, int32(len(next)))
		}
		next, prev = append(next, adds[a].rankEntry), append(prev, -1)
	}
	t.fillMoved(next, prev, moved)
}

// fillMoved gives each moved job (ranks moved) its last rank, then makes
// next and prev the ranking.
func (t *changeRanks) fillMoved(next []rankEntry, prev, moved []int32) {
	for _, r := range moved {
		prev[r] = t.dropAt[next[r].pos]
	}
	t.ord, t.next, t.prev, t.movedAt = next, t.ord, prev, moved
}

// dropped marks, in mergePar's first phase, an old entry that leaves.
const dropped = math.MinInt32

// passParts is a two-phase merge's first phase (mergePar) over w parts
// of the last ranking, m entries whose i-th is listed at pos(i) (n: the
// positions listed now): each part passes its old entries (passOld
// writes only their own positions' marks and dropAt), notes each one's
// last rank in olr (dropped: it leaves) and counts those that stay.
func (c *changeState) passParts(m int, n int32, w int, pos func(i int) int32) (olr []int32, parts []split.MergePart) {
	olr = grow(c.olr, m)
	c.olr = olr
	c.mparts = growKeep(c.mparts, w)
	parts = c.mparts[:w]
	forRanges(m, w, func(k, lo, hi int) {
		kept, last := 0, -1
		for i := lo; i < hi; i++ {
			olr[i] = dropped
			if p := pos(i); p < n {
				if lr, keep := c.passOld(p, int32(i)); keep {
					olr[i], kept, last = lr, kept+1, i
				}
			}
		}
		parts[k].Kept, parts[k].Last = kept, last
	})
	return olr, parts
}

// mergePar is merge over w parts of the last ranking, a two-phase
// merge (internal/split): passParts passes the old entries (passOld
// writes only their own positions' marks and dropAt) and counts those
// that stay; split.PlaceAdds gives each part its adds (compare is a
// total order, and no add shares a staying entry's position) and output
// offset; each part then writes its own ranks and lists its moved jobs'.
// The adds ranking below every staying entry go last. The result is the
// serial merge's.
func (t *changeRanks) mergePar(listed int, adds []addEntry, w int) {
	ord := t.ord
	olr, parts := t.passParts(len(ord), int32(listed), w, func(i int) int32 { return ord[i].pos })
	keptAll, addsAt := split.PlaceAdds(parts, len(adds), func(a, last int) bool {
		return t.compare(&adds[a].rankEntry, &ord[last]) >= 0
	})
	next, prev := grow(t.next, keptAll+len(adds)), grow(t.prev, keptAll+len(adds))
	t.partMoved = growKeep(t.partMoved, w)
	forRanges(len(ord), w, func(k, lo, hi int) {
		pa := &parts[k]
		o, a, moved := pa.Out, pa.Lo, t.partMoved[k][:0]
		for i := lo; i < hi; i++ {
			if olr[i] == dropped {
				continue
			}
			e := &ord[i]
			for ; a < pa.Hi && t.compare(&adds[a].rankEntry, e) < 0; a, o = a+1, o+1 {
				if adds[a].moved {
					moved = append(moved, int32(o))
				}
				next[o], prev[o] = adds[a].rankEntry, -1
			}
			next[o], prev[o] = *e, olr[i]
			o++
		}
		t.partMoved[k] = moved
	})
	moved := t.movedAt[:0]
	for _, m := range t.partMoved[:w] {
		moved = append(moved, m...)
	}
	for a, o := addsAt, keptAll+addsAt; a < len(adds); a, o = a+1, o+1 {
		if adds[a].moved {
			moved = append(moved, int32(o))
		}
		next[o], prev[o] = adds[a].rankEntry, -1
	}
	t.fillMoved(next, prev, moved)
}

// ranked writes the Ranking and RankIndexes from ord: each rank reads
// its job's pointer (a miss at 100,000 jobs), so parts run side by side.
func (t *changeRanks) ranked(s *policy.Snapshot) []policy.Ranked {
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
func (t *changeRanks) rankedRange(s *policy.Snapshot, lo, hi int) {
	out, at := t.out, t.at
	if t.lazy { // the job's pointer is the random read a rank
		for r := lo; r < hi; r++ {
			e := &t.ord[r]
			out[r] = policy.Ranked{Queue: int(e.queue)}
			at[r] = e.pos + 1
		}
		return
	}
	jobs := s.Jobs
	for r := lo; r < hi; r++ {
		e := &t.ord[r]
		out[r] = policy.Ranked{Job: jobs[e.pos], Queue: int(e.queue)}
		at[r] = e.pos + 1
	}
}

// compare is compareKeyed, then position, for the jobs of entries a
// and b (neither Submit NaN). A tie of keys breaks by the Submit and ID
// kept of each position's job (sub, id: its job's, for every listed
// position), so no job is read: a re-rank between calls (Prepare) may
// find the snapshot moved on.
func (t *changeRanks) compare(a, b *rankEntry) int {
	switch {
	case a.queue != b.queue:
		return cmpInt(int(a.queue), int(b.queue))
	case a.k[0] != b.k[0]:
		return cmpU64(a.k[0], b.k[0])
	case a.k[1] != b.k[1]:
		return cmpU64(a.k[1], b.k[1])
	case a.k[2] != b.k[2]:
		return cmpU64(a.k[2], b.k[2])
	}
	if c := submitOrder(t.sub[a.pos], t.sub[b.pos]); c != 0 {
		return c
	}
	if c := strings.Compare(t.id[a.pos], t.id[b.pos]); c != 0 {
		return c
	}
	return cmpInt(int(a.pos), int(b.pos))
}

// changeRanked is what an ordering keeps to rank by changes: the
// ranker, whether its last Order came from it, and its Order calls.
type changeRanked struct {
	t     changeRanks
	fast  bool
	calls uint64
}

// general counts an Order call ranked by the general path.
func (c *changeRanked) general() {
	c.calls++
	c.fast = false
	c.t.forget()
}

// rank counts an Order call and ranks s by changes where that applies;
// the general path's key cache is then told it missed these stamps.
func (c *changeRanked) rank(s *policy.Snapshot, sc *scratch, key func(*policy.Job) keyed) ([]policy.Ranked, bool) {
	return c.rankBy(s, sc, key, sc.kc.mv)
}

// rankBy is rank with the mover mv (where the general path keeps
// another).
func (c *changeRanked) rankBy(s *policy.Snapshot, sc *scratch, key func(*policy.Job) keyed, mv mover) ([]policy.Ranked, bool) {
	c.calls++
	c.fast = false
	out, ok := c.t.rank(s, key, mv)
	if ok {
		sc.kc.forget()
		c.fast = true
	}
	return out, ok
}

// orderIndexed is OrderIndexed for an ordering that may rank by changes:
// its Order, leaving the jobs of a ranking by changes to the caller.
func (c *changeRanked) orderIndexed(order func() []policy.Ranked) ([]policy.Ranked, bool) {
	out := lazily(&c.t.lazy, order)
	return out, c.fast
}

// rankIndexes is RankIndexes for an ordering that may rank by changes.
func (c *changeRanked) rankIndexes(sc *scratch) []int32 {
	if c.fast {
		return c.t.at
	}
	return sc.rankIndexes()
}

// prevRanks is PrevRanks for an ordering that may rank by changes.
func (c *changeRanked) prevRanks() ([]int32, uint64) {
	if c.fast {
		return c.t.prev, c.calls
	}
	return nil, c.calls
}
