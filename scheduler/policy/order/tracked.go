package order

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// keyCache keeps an ordering's keys of a tracked snapshot's jobs
// (Snapshot.JobGen) by position, so a job whose stamp did not move is
// keyed without being read: at 100,000 jobs every job read is a cache
// miss, and the pass keying them all was a third of a decision. Only
// orderings whose key is a function of the job alone (and of state they
// track themselves) use it.
type keyCache struct {
	// gen is the last tracked call's JobGen (its stamps by position)
	gen []uint64
	// valid: the last call was tracked and its keys (sc.inc.keys) were
	// kept, so pos indexes them
	valid bool
	pos   []posKey // by position
	// fresh: prev (in sc.inc.prev) is this call's match, for sortFor
	fresh bool
	// on: this call's keys came from trackedKeys (so ranked records
	// each job's snapshot index for RankIndexes)
	on bool
	// at: trackedKeysPar's matches by position; later: the positions
	// each of its workers left to be keyed in list order (keyInOrder)
	at    []int32
	later [maxWorkers][]int32
	// accr marks the positions whose job accrues (policy.Accrual) and
	// whose key therefore moves with Now under an unchanged stamp; acc
	// keeps, by position, what mv needs to re-key it without reading it
	accr []bool
	acc  []accKey
	// mv is the ordering's mover. An ordering whose key depends on
	// service must set one; without one (fifo) the key ignores service
	// and an accruing job is keyed only when its stamp moves
	mv mover
	// now is this call's Snapshot.Now
	now policy.Seconds
}

// accKey is what keyCache keeps of an accruing job: its accrual, its
// service as of the accrual's Since and the ordering's aux.
type accKey struct {
	acc                policy.Accrual
	attained, executed float64
	aux                float64
}

// mover re-keys an unchanged accruing job from what keyCache kept of it:
// move sets the key's service-dependent fields of the job at position i
// for service (attained, executed) bit for bit as the ordering's key
// function does from the job, given aux, what aux took of the job when
// it was last read (nil: nothing). It returns false, having changed
// nothing, where it cannot: the job is then read. Both must be safe to
// call concurrently (for distinct positions). until, where set, is the
// latest Now at which move cannot change key e of a job accruing as a
// says (−Inf: none known): changeRanks then skips the job until then.
type mover struct {
	aux   func(j *policy.Job) float64
	move  func(i int, e *posKey, aux, attained, executed float64) bool
	until func(e *posKey, a *accKey) float64
	// hold, where set, reports that key e of the job at position i holds
	// this call whatever its service: move is then not called (keyCache
	// only; same concurrency as move)
	hold func(i int, e *posKey) bool
}

// holds is until's answer for key e, −Inf without one.
func (mv mover) holds(e *posKey, a *accKey) float64 {
	if mv.until == nil {
		return math.Inf(-1)
	}
	return mv.until(e, a)
}

// posKey is what keyCache keeps of the job at one position: its key,
// and its index in the last call's keys (-1: it was not active). One
// 32-byte record, so a position costs one sequential read.
type posKey struct {
	k     [3]float64
	queue int32
	ksAt  int32
}

// trackedKeys is activeKeys for a tracked snapshot: unchanged jobs get
// their last key, the others key(j). It also matches each job with the
// last call's keys by position (prev, in sc.inc.prev), reading a changed
// job only to check it is the same job. ok is false for an untracked
// snapshot: the caller then keys as before. The stamps are compared in
// the same pass (a stamp is unchanged when it is non-zero and equal to
// the last call's at that position, as policy.JobTrack says).
func (sc *scratch) trackedKeys(s *policy.Snapshot, key func(j *policy.Job) keyed) (ks []keyed, ok bool) {
	return sc.trackedKeysThen(s, key, nil)
}

// trackedKeysThen is trackedKeys with the keys finished: finish, unless
// nil, turns the keys of ks it is given into the ordering's final keys,
// n being how many jobs are active (ks's length when done). The split
// pass calls it on each part's keys as it writes them, while they are in
// cache, so the ordering makes no pass of its own over every key (at
// 122,000 jobs one is ~5 MB read and written back from memory). It must
// be safe to call concurrently on distinct keys, and read nothing else
// of them than the keys it is given.
func (sc *scratch) trackedKeysThen(s *policy.Snapshot, key func(j *policy.Job) keyed, finish func(ks []keyed, n int)) (ks []keyed, ok bool) {
	kc := &sc.kc
	if !s.JobsTracked() {
		kc.valid, kc.fresh, kc.on = false, false, false
		return nil, false
	}
	n := len(s.Jobs)
	oldN := len(kc.pos)
	if !kc.valid {
		oldN = 0 // nothing of the last call is reusable
	}
	kc.pos, kc.gen = growKeep(kc.pos, n), growKeep(kc.gen, n)
	kc.accr, kc.acc = growKeep(kc.accr, n), growKeep(kc.acc, n)
	kc.now = s.Now
	if w := workers(n); w > 1 && (sc.split || sc.keyInOrder) {
		ks = sc.trackedKeysPar(s, key, oldN, w, finish)
		kc.valid, kc.fresh, kc.on = true, true, true
		return ks, true
	}
	pos, stamps := kc.pos, s.JobGen[:n]
	last := sc.inc.keys
	ks = sc.keys(n)[:0]
	prev := grow(sc.inc.prev, n)[:0]
	for i, j := range s.Jobs {
		e := &pos[i]
		p, listed := e.ksAt, e.ksAt >= 0
		if !kc.unchanged(i, oldN, stamps[i]) {
			p, listed = kc.rekey(i, oldN, j, stamps[i], last, key)
		} else if kc.accr[i] {
			p, listed = kc.accrue(i, oldN, j, last, key)
		}
		if !listed {
			e.ksAt = -1
			continue
		}
		e.ksAt = int32(len(ks))
		ks = append(ks, keyed{job: j, queue: e.queue, at: int32(i + 1), k: e.k}) // few jobs: no split
		prev = append(prev, p)
	}
	sc.ks, sc.inc.prev = ks, prev
	kc.valid, kc.fresh, kc.on = true, true, true
	if finish != nil {
		finish(ks, len(ks))
	}
	return ks, true
}

// unchanged reports that the job at position i keeps its key and match
// (oldN: how many positions the last call kept, g: the job's stamp).
func (kc *keyCache) unchanged(i, oldN int, g uint64) bool {
	return i < oldN && g != 0 && kc.gen[i] == g
}

// rekey is trackedKeys' step for a job whose stamp moved: keyed into
// pos[i] if active, its last match kept only if it is the same job. It
// returns the match (the job's index in the last call's keys, -1: none)
// and whether the position lists an active job, and writes only position
// i (trackedKeysPar's workers own their ranges).
func (kc *keyCache) rekey(i, oldN int, j *policy.Job, g uint64, last []keyed, key func(j *policy.Job) keyed) (int32, bool) {
	kc.gen[i] = g
	kc.accr[i] = false
	if !isActive(j) {
		return -1, false
	}
	e := &kc.pos[i]
	k := key(j)
	e.k, e.queue = k.k, k.queue
	if j.Accrues() && kc.mv.move != nil {
		kc.accr[i] = true
		a := accKey{acc: j.Accrual, attained: j.Attained, executed: j.Executed}
		if kc.mv.aux != nil {
			a.aux = kc.mv.aux(j)
		}
		kc.acc[i] = a
	}
	p := int32(-1)
	if i < oldN {
		p = e.ksAt
	}
	if p >= 0 && (int(p) >= len(last) || !sameJob(last[p].job, j)) {
		p = -1
	}
	return p, true
}

// accrue is trackedKeys' step for an unchanged job that accrues: its key
// moved with Now. The ordering's mover re-keys it from what rekey kept;
// where it cannot, the job is read and keyed again (as a changed job,
// keeping its stamp).
func (kc *keyCache) accrue(i, oldN int, j *policy.Job, last []keyed, key func(j *policy.Job) keyed) (int32, bool) {
	if kc.move(i) {
		return kc.pos[i].ksAt, true
	}
	return kc.rekey(i, oldN, j, kc.gen[i], last, key)
}

// move is accrue's mover step for position i: false where the mover
// cannot re-key the job (it must be read).
func (kc *keyCache) move(i int) bool {
	e := &kc.pos[i]
	if kc.mv.hold != nil && kc.mv.hold(i, e) {
		return true
	}
	a := &kc.acc[i]
	at, ex := a.acc.At(kc.now, a.attained, a.executed)
	return kc.mv.move(i, e, a.aux, at, ex)
}

// skipped marks, in trackedKeysPar's first phase, a position that lists
// no active job (its prev is written in the second).
const skipped = math.MinInt32

// trackedKeysPar is trackedKeys' loop split across w workers over fixed
// ranges of positions, in two phases: each worker first keys its range's
// changed jobs and matches them (as the serial loop) and counts its
// active ones, keeping each position's match in prev's slot of the same
// index; then, from the counts' prefix sums, each writes its range's
// keys and matches at the same indexes the serial loop appends them to.
// key must be safe to call concurrently (scratch.split), unless
// scratch.keyInOrder: the jobs it must key are then listed by each
// worker and keyed between the phases, serially in list order (movers
// still run in the first: each writes only its own position).
func (sc *scratch) trackedKeysPar(s *policy.Snapshot, key func(j *policy.Job) keyed, oldN, w int, finish func(ks []keyed, n int)) []keyed {
	n := len(s.Jobs)
	kc := &sc.kc
	pos, stamps, jobs := kc.pos, s.JobGen[:n], s.Jobs
	last := sc.inc.keys
	ks := sc.keys(n)
	// each position's match (or skipped), for the second phase
	at := grow(sc.kc.at, n)
	sc.kc.at = at
	var counts [maxWorkers]int
	inOrder := !sc.split
	forRanges(n, w, func(k, lo, hi int) {
		c := 0
		later := kc.later[k][:0]
		for i := lo; i < hi; i++ {
			p, listed := pos[i].ksAt, pos[i].ksAt >= 0
			switch {
			case !kc.unchanged(i, oldN, stamps[i]):
				if inOrder {
					later = append(later, int32(i)) // keyed between the phases
					continue
				}
				p, listed = kc.rekey(i, oldN, jobs[i], stamps[i], last, key)
			case kc.accr[i] && !kc.move(i): // accrue, the mover's step taken
				if inOrder {
					later = append(later, int32(i))
					continue
				}
				p, listed = kc.rekey(i, oldN, jobs[i], kc.gen[i], last, key)
			}
			if !listed {
				at[i] = skipped
				continue
			}
			at[i] = p
			c++
		}
		counts[k], kc.later[k] = c, later
	})
	if inOrder {
		kc.keyLater(w, &counts, oldN, jobs, stamps, last, key)
	}
	total := 0
	var starts [maxWorkers]int
	for k := range w {
		starts[k], total = total, total+counts[k]
	}
	prev := grow(sc.inc.prev, total)
	forRanges(n, w, func(k, lo, hi int) {
		o := starts[k]
		for i := lo; i < hi; i++ {
			e := &pos[i]
			p := at[i]
			if p == skipped {
				e.ksAt = -1
				continue
			}
			e.ksAt = int32(o)
			ks[o].set(jobs[i], e.queue, int32(i+1), e.k)
			prev[o] = p
			o++
		}
		if finish != nil {
			finish(ks[starts[k]:o], total)
		}
	})
	ks = ks[:total]
	sc.ks, sc.inc.prev = ks, prev
	return ks
}

// keyLater keys, in list order, the positions trackedKeysPar's workers
// left for it (its first phase, with keyInOrder), as the serial loop
// would (an unchanged job its mover could not re-key keeps its stamp,
// which equals gen), and counts the active ones in their parts.
func (kc *keyCache) keyLater(w int, counts *[maxWorkers]int, oldN int, jobs []*policy.Job, stamps []uint64, last []keyed, key func(j *policy.Job) keyed) {
	for k := range w {
		for _, i := range kc.later[k] {
			p, listed := kc.rekey(int(i), oldN, jobs[i], stamps[i], last, key)
			if !listed {
				kc.at[i] = skipped
				continue
			}
			kc.at[i] = p
			counts[k]++
		}
	}
}

// forget drops what was kept: the next tracked call keys every job.
func (kc *keyCache) forget() {
	kc.valid, kc.fresh, kc.on = false, false, false
}

// keysOf is trackedKeys where the snapshot is tracked, else activeKeys.
func (sc *scratch) keysOf(s *policy.Snapshot, key func(j *policy.Job) keyed) []keyed {
	if ks, ok := sc.trackedKeys(s, key); ok {
		return ks
	}
	return sc.activeKeys(s, key)
}

// matchFor is trackedKeys' match when this call made one, else matchAny.
func (sc *scratch) matchFor(ks []keyed, listed bool) ([]int32, bool) {
	if sc.kc.fresh {
		sc.kc.fresh = false
		return sc.inc.prev[:len(ks)], true
	}
	return sc.inc.matchAny(ks, listed)
}

// lastKeys is a copy of the last tracked call's keys, for an ordering to
// re-key in place between calls and re-rank with resortLast (Prepare);
// nil where that call did not keep them.
func (sc *scratch) lastKeys() []keyed {
	last := sc.inc.keys
	if !sc.kc.valid || len(last) == 0 {
		return nil
	}
	ks := sc.keys(len(last))
	copy(ks, last)
	return ks
}

// resortLast re-ranks ks, lastKeys re-keyed, from the last order: each
// key is matched with itself, so only those whose keys moved are
// sorted and merged in. The next call's match then finds this order.
func (sc *scratch) resortLast(ks []keyed) {
	self := grow(sc.self, len(ks))
	for i := range self {
		self[i] = int32(i)
	}
	sc.self = self
	sc.sortMatched(ks, self, true)
}

// sortFor is sortIncremental, using trackedKeys' match when there is one.
func (sc *scratch) sortFor(ks []keyed, listed bool) []policy.Ranked {
	prev, ok := sc.matchFor(ks, listed)
	return sc.sortMatched(ks, prev, ok)
}

// growKeep resizes xs to n keeping its contents (new room zeroed or
// stale: callers overwrite every index they do not trust).
func growKeep[T any](xs []T, n int) []T {
	if cap(xs) < n {
		ys := make([]T, n, n+n/8)
		copy(ys, xs)
		return ys
	}
	return xs[:n]
}

// RankIndexes says where each job of the last ranking is listed in its
// snapshot, for a tracked snapshot (policy.RankIndexer); nil otherwise.
func (o *FIFO) RankIndexes() []int32 {
	if o.fast {
		return o.tr.at
	}
	return o.sc.rankIndexes()
}

// PrevRanks says where each job of the last ranking stood in the one
// before it (policy.PrevRanker), when the last call ranked by changes.
func (o *FIFO) PrevRanks() ([]int32, uint64) {
	if o.fast {
		return o.tr.prev, o.calls
	}
	return nil, o.calls
}

// OrderIndexed is Order leaving the jobs of a ranking by changes to the
// Framework (policy.IndexOrderer).
func (o *LAS) OrderIndexed(s *policy.Snapshot) ([]policy.Ranked, bool) {
	return o.cr.orderIndexed(func() []policy.Ranked { return o.Order(s) })
}

// OrderIndexed is LAS.OrderIndexed for SRTF.
func (o *SRTFOracle) OrderIndexed(s *policy.Snapshot) ([]policy.Ranked, bool) {
	return o.cr.orderIndexed(func() []policy.Ranked { return o.Order(s) })
}

// RankIndexes is FIFO.RankIndexes for 2D-LAS.
func (o *LAS) RankIndexes() []int32 { return o.cr.rankIndexes(&o.sc) }

// PrevRanks is FIFO.PrevRanks for 2D-LAS.
func (o *LAS) PrevRanks() ([]int32, uint64) { return o.cr.prevRanks() }

// RankIndexes is FIFO.RankIndexes for SRTF.
func (o *SRTFOracle) RankIndexes() []int32 { return o.cr.rankIndexes(&o.sc) }

// PrevRanks is FIFO.PrevRanks for SRTF.
func (o *SRTFOracle) PrevRanks() ([]int32, uint64) { return o.cr.prevRanks() }

// OrderIndexed is Order leaving a tracked ranking's jobs to the Framework
// (policy.IndexOrderer).
func (o *Gittins) OrderIndexed(s *policy.Snapshot) ([]policy.Ranked, bool) {
	out, lazy := o.sc.orderIndexed(func() []policy.Ranked {
		return lazily(&o.cr.t.lazy, func() []policy.Ranked { return o.Order(s) })
	})
	return out, lazy || o.cr.fast
}

// orderIndexed is OrderIndexed for an ordering ranked by sc.
func (sc *scratch) orderIndexed(order func() []policy.Ranked) ([]policy.Ranked, bool) {
	out := lazily(&sc.lazy, order)
	return out, sc.atValid && len(sc.at) == len(out)
}

// lazily is order's ranking with *lazy set while it runs: the ranker
// that reads it leaves a tracked ranking's jobs to the Framework
// (OrderIndexed); every other call fills them.
func lazily(lazy *bool, order func() []policy.Ranked) []policy.Ranked {
	*lazy = true
	defer func() { *lazy = false }()
	return order()
}

// RankIndexes is FIFO.RankIndexes for 2D-Gittins.
func (o *Gittins) RankIndexes() []int32 { return o.cr.rankIndexes(&o.sc) }

// RankIndexes is FIFO.RankIndexes for fair.
func (o *Fair) RankIndexes() []int32 {
	if o.fast {
		return o.rr.at
	}
	return o.sc.rankIndexes()
}

// PrevRanks is FIFO.PrevRanks for fair.
func (o *Fair) PrevRanks() ([]int32, uint64) {
	if o.fast {
		return o.rr.prev, o.calls
	}
	return nil, o.calls
}

// RankIndexes is FIFO.RankIndexes for Lucid.
func (l *Lucid) RankIndexes() []int32 { return l.sc.rankIndexes() }

// OrderIndexed is Gittins.OrderIndexed for lucid.
func (l *Lucid) OrderIndexed(s *policy.Snapshot) ([]policy.Ranked, bool) {
	return l.sc.orderIndexed(func() []policy.Ranked { return l.Order(s) })
}
