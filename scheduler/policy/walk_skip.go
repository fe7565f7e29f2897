package policy

import (
	"slices"
	"sort"
)

// The skipping walk. Once a shape's memo holds a failure at the current
// epoch (and, for a preemptive ordering, its failure even with
// preemption), every later queued job of that shape waits for that same
// reason until a start or a preemption moves the epoch: admit reads the
// memo and appends the Wait, changing nothing else. At 100,000 queued
// jobs of tens of shapes almost every job of a decision is such a job,
// yet the walk visited each. The skipping walk indexes the
// queued jobs by shape in a pass split across cores, visits (admits)
// only the next job of each shape the memos do not settle, and leaves
// room in Waiting for the jobs it passes over; a second split pass
// writes their Waits from the failures that held when the walk passed
// them. Waiting holds the same entries in the same order as the plain
// walk's: each passed-over job's slot is where the plain walk would have
// appended it.

// Values of skipIndex.id for a job that is not queued, and for a queued
// job whose request is invalid (it waits for admission's reason).
const (
	notQueued    int32 = -1
	inadmissible int32 = -2
)

// maxSkipShapes bounds the shapes the skipping walk follows: each visit
// looks at every shape, so thousands of them walk job by job instead.
const maxSkipShapes = 256

// skipWalkMin is the fewest ranked jobs the skipping walk is taken for
// (tests lower it), and skipWalkOff turns it off (tests compare).
var (
	skipWalkMin = 4096
	skipWalkOff bool
)

// skipIndex is the skipping walk's index of the ranked jobs by shape and
// its state; the Framework keeps it for its storage.
type skipIndex struct {
	id    []int32     // by rank: the queued job's shape, or a value above
	qcum  []int32     // by rank: how many queued jobs rank above (n+1 long)
	keys  []shapeBits // by shape
	never []string    // by shape: why the cluster never fits it ("": it may)
	start []int32     // by shape: where its ranks begin in ranks (len(keys)+1 long)
	ranks []int32     // the queued jobs' ranks by shape, ascending in each
	parts []skipPart
	// kept are the shapes kept from round to round (walk_skip_index.go),
	// kdem their demands; by kept id: total counts the round's queued
	// jobs, dense is the round's id (-1: none queued)
	kept         shapeSet
	kdem         []Demand
	total, dense []int32
	// known counts the queued jobs the last index found a kept id for
	// (for tests)
	known int
	// victims: this round's index listed the preemptable running jobs
	// (skipPart.victims), so findVictims need not pass over the ranks
	victims bool
	// the walk's state: the memo of each shape once visited, each
	// shape's next rank in ranks, the ranges passed over and the
	// failures that held for them
	memos []*shapeMemo
	cur   []int32
	segs  []skipSeg
	snaps []*failure
	// visits counts the jobs the last walk admitted (for tests; walk
	// zeroes it)
	visits int
}

// skipPart is one part's share of the index pass.
type skipPart struct {
	kcount []int32 // by kept id: the part's queued jobs of that shape
	// the shapes of the part's entries without a kept id, by the part's
	// own ids: their counts, demands and kept ids
	set   shapeSet
	count []int32
	dems  []Demand
	trans []int32
	pos   []int32 // by shape: where the part's next rank of it goes
	// victims are the part's preemptable running jobs' ranks, ascending
	victims []int
	queued  int32
	qbase   int32 // queued jobs in the parts before it
}

// skipSeg is a range of ranks the walk passed over: its queued jobs'
// Waits go to Waiting from at on, each the failure its shape had in
// snaps[snap:] (or its own reason).
type skipSeg struct {
	at     int
	lo, hi int32
	snap   int32
}

// skipIndexed indexes the ranked jobs for the skipping walk where the
// round allows it (walk otherwise walks job by job): false where it does
// not, or the index cannot follow the shapes.
func (r *round) skipIndexed() bool {
	sh, ok := r.f.Place.(DemandShaper)
	if skipWalkOff || r.info == nil || len(r.ranked) < skipWalkMin || !ok || !sh.ShapesByDemand() {
		return false
	}
	return r.f.skips.index(r)
}

// walkSkipping walks the ranked jobs, indexed (skipIndexed), as walk
// does, visiting only those a memo does not settle.
func (r *round) walkSkipping() {
	x := &r.f.skips
	x.memos = grow(x.memos, len(x.keys))
	clear(x.memos)
	x.cur = append(x.cur[:0], x.start[:len(x.keys)]...)
	x.segs, x.snaps = x.segs[:0], x.snaps[:0]
	n := len(r.ranked)
	for i := 0; ; {
		next := x.nextVisit(r, i)
		r.passOver(x, i, next, nil)
		if next == n {
			break
		}
		d, _ := r.demand(next) // admissible: index said so
		r.admit(next, d)
		x.visits++
		if r.spent() {
			r.passOver(x, next+1, n, r.budgetFailure())
			break
		}
		if g := x.id[next]; x.memos[g] == nil {
			x.memos[g] = r.memoBits(x.keys[g])
		}
		i = next + 1
	}
	r.fillPassed(x)
	clear(x.snaps) // kept for storage: not to keep this round's failures alive
	clear(x.memos)
}

// decides reports that m decides every job of its shape at this epoch:
// or at every epoch, where the shape is hopeless and only reasons would
// tell its jobs apart (admit then answers without a trial).
func (r *round) decides(m *shapeMemo) bool {
	if m == nil {
		return false
	}
	if m.hopeless && r.s.SkipReasons {
		return true
	}
	return m.place.valid(r.cap.Epoch) && (!r.preemptive || m.preempt.valid(r.cap.Epoch))
}

// decidedBy is the failure a settled memo gives its jobs (admit's).
func (r *round) decidedBy(m *shapeMemo) *failure {
	if r.preemptive {
		return m.preempt
	}
	return m.place
}

// nextVisit is the first rank from i of a queued job whose shape is not
// settled (len(ranked) if none).
func (x *skipIndex) nextVisit(r *round, i int) int {
	next := len(r.ranked)
	for g := range x.cur {
		if r.decides(x.memos[g]) {
			continue
		}
		c, end := x.cur[g], x.start[g+1]
		for c < end && int(x.ranks[c]) < i {
			c++ // each rank is passed once a round: linear in all
		}
		x.cur[g] = c
		if c < end && int(x.ranks[c]) < next {
			next = int(x.ranks[c])
		}
	}
	return next
}

// passOver leaves room in Waiting for the queued jobs ranked [lo, hi),
// which the memos settle, and notes the failures that hold for them:
// every shape's is all's where all is not nil (the start budget's; fill
// still gives a shape that never fits, or an invalid request, its own).
// Without reasons there is nothing to leave room for.
func (r *round) passOver(x *skipIndex, lo, hi int, all *failure) {
	c := int(x.qcum[hi] - x.qcum[lo])
	if c == 0 || r.s.SkipReasons {
		return
	}
	snap := len(x.snaps)
	for _, m := range x.memos {
		f := all
		if f == nil && r.decides(m) {
			f = r.decidedBy(m)
		}
		x.snaps = append(x.snaps, f)
	}
	x.segs = append(x.segs, skipSeg{at: len(r.dec.Waiting), lo: int32(lo), hi: int32(hi), snap: int32(snap)})
	r.dec.Waiting = slices.Grow(r.dec.Waiting, c)[:len(r.dec.Waiting)+c]
}

// fillPassed writes the Waits of the jobs the walk passed over, split
// across cores: each slot is known, and the parts only read what they
// share (warm builds the texts first: failure.text caches what it
// builds).
func (r *round) fillPassed(x *skipIndex) {
	if len(x.segs) == 0 {
		return
	}
	x.warm(r.queued, min(r.topQueue, maxCachedQueue-1))
	n := len(r.ranked)
	split(n, splitParts(n), func(_, lo, hi int) { x.fill(r, lo, hi) })
}

// warm builds the texts of every noted failure for the queues up to top.
func (x *skipIndex) warm(prefixed bool, top int) {
	for _, f := range x.snaps {
		if f != nil && f.warmed < top+1 {
			for q := f.warmed; q <= top; q++ {
				f.text(q, prefixed)
			}
			f.warmed = top + 1
		}
	}
}

// fill writes the Waits of the passed-over jobs ranked [lo, hi).
func (x *skipIndex) fill(r *round, lo, hi int) {
	s := sort.Search(len(x.segs), func(k int) bool { return int(x.segs[k].hi) > lo })
	for ; s < len(x.segs) && int(x.segs[s].lo) < hi; s++ {
		sg := &x.segs[s]
		a, b := max(lo, int(sg.lo)), min(hi, int(sg.hi))
		out := sg.at + int(x.qcum[a]-x.qcum[sg.lo])
		snap := x.snaps[sg.snap:]
		for i := a; i < b; i++ {
			var why string
			switch g := x.id[i]; {
			case g == notQueued:
				continue
			case g >= 0 && x.never[g] != "":
				why = x.never[g]
			case g >= 0:
				why = snap[g].warmText(r.dec.Ranking[i].Queue, r.queued)
			default:
				_, why = r.admission(i)
			}
			r.dec.Waiting[out] = Wait{JobID: r.dec.Ranking[i].JobID, Reason: why}
			out++
		}
	}
}
