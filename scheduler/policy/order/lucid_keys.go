package order

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// lucidSlot is what Lucid keeps of the job listed at one position of a
// tracked snapshot to key it: its cached estimate, the ids of its
// features (so a refit re-predicts it from a few table reads, without
// the string-keyed level maps: lucidIDs), its GPU share and the last
// remaining time computed. It is refreshed whenever the job at that
// position changed (every job, after an untracked snapshot), so for an
// unchanged job it holds what the job would give: the key is rebuilt
// from it without reading the job, bit for bit as from the job.
//
// What every tracked call reads of a slot is kept apart (lucidHot): the
// rest is read only to size a job again.
type lucidSlot struct {
	// ids are the job's features' (idsOK: read since the slot was new),
	// lv their levels as last read (levels)
	ids   lucidFeatureIDs
	idsOK bool
	lv    [numTerms]int32
	share float64
	e     float64 // the job's Executed
	// lne is ln e while lnOK (e moved: taken again when sized). A
	// queued job's e stays put, and every refit sizes every job again,
	// so the logarithm is kept rather than taken ~100,000 times a refit
	lne  float64
	lnOK bool
}

// lucidHot is the part of a slot every tracked call reads (sizeKeys,
// modelKeysPar): 24 bytes a job where the whole slot is ~90. At 10k ×
// 100k the pass over every slot read ~12 MB a decision.
type lucidHot struct {
	p *lucidPred
	// size is the remaining time for the slot's e at model version
	// remVer (-1: none), times its share: with the entry fixed, its
	// inputs (the ln estimate and the model's spread) change only with
	// the version
	size   float64
	remVer int32
	// fixed: the job runs past its profiling run, so it is never a
	// victim (CanPreempt) while its stamp holds (sizeKeys)
	fixed bool
	// dropped: its entry was dropped since the last call (markDropped)
	dropped bool
}

// lucidFeatures is what a slot's ids were read from, to tell whether a
// changed job's features moved (apart from the slot: read only for
// changed jobs).
type lucidFeatures struct {
	user, model string
	workers     int
	fraction    float64
	submit      policy.Seconds
}

// lucidKeying is one Order call's view of the model, read once.
type lucidKeying struct {
	jobs    []*policy.Job // the snapshot's list, for posOf
	cur     int           // posOf's scan position
	version int
	sigma   float64
	// loose: the call skips reasons (Snapshot.SkipReasons), so its
	// ranking need not place a job that is never a victim exactly
	loose bool
	// preparing: Prepare, not a call, is sizing (bring marks what it
	// brings)
	preparing bool
}

// beginKeys sizes the slots for s and reads the model's state.
func (l *Lucid) beginKeys(s *policy.Snapshot) {
	n := len(s.Jobs)
	if len(l.slots) > n { // positions gone: drop their entries
		for i := range l.slots[n:] {
			l.retarget(n+i, nil)
		}
		clear(l.slots[n:])
		clear(l.hot[n:])
		clear(l.feats[n:])
	}
	if len(l.byPos) > n {
		clear(l.byPos[n:])
	}
	// growKeep's room past the old length is zero: what it drops is zeroed above
	l.slots, l.hot, l.feats, l.byPos = growKeep(l.slots, n), growKeep(l.hot, n), growKeep(l.feats, n), growKeep(l.byPos, n)
	l.kk = lucidKeying{jobs: s.Jobs, version: l.est.Version(), sigma: l.est.Sigma(), loose: s.SkipReasons}
	l.ids.sync(l.est)
}

// endKeys drops the call's reference to the snapshot.
func (l *Lucid) endKeys() { l.kk.jobs = nil }

// posOf is the position of j in the snapshot being ordered. The key
// functions are called in list order, so the scan goes forward from the
// last position found (one pass over the list in all); it wraps around
// for safety. -1: not listed.
func (l *Lucid) posOf(j *policy.Job) int {
	k, js := &l.kk, l.kk.jobs
	for i := k.cur; i < len(js); i++ {
		if js[i] == j {
			k.cur = i + 1
			return i
		}
	}
	for i := 0; i < min(k.cur, len(js)); i++ {
		if js[i] == j {
			k.cur = i + 1
			return i
		}
	}
	return -1
}

// fill refreshes slot i from j, the job listed there now, creating j's
// estimate entry on its first ranking. The caller brings the entry to
// the model's version (bring) in list order, as Order always did: jobs
// listed twice under one ID share an entry, and the first listed sets
// its prediction.
func (l *Lucid) fill(i int, j *policy.Job) {
	sl, h := &l.slots[i], &l.hot[i]
	p := h.p
	if p == nil || p.gone || p.id != j.ID {
		p = l.pred[j.ID]
		if p == nil { // first ranked: freeze the recent term (as entry does)
			l.featuresAt(i, j)
			lv := l.levels(sl)
			p = &lucidPred{id: j.ID, version: l.kk.version, main: l.est.predictLevels(*lv), ctx: l.est.recentScore(lv[termUser])}
			p.first = math.Exp(p.main + p.ctx)
			l.pred[j.ID] = p
		}
		l.retarget(i, p)
		h.remVer = -1
	}
	if g := gpuShare(j); math.Float64bits(g) != math.Float64bits(sl.share) {
		sl.share, h.remVer = g, -1 // written only when it moved: a clean line is not written back
	}
	l.served(i, l.executed(j))
	if fixed := j.State == policy.Running && l.phase(j, l.now) == mainPhase; fixed != h.fixed {
		h.fixed = fixed
	}
	p.seen = l.calls
}

// executed is j's Executed now.
func (l *Lucid) executed(j *policy.Job) float64 {
	_, e := j.ServiceAt(l.now)
	return e
}

// served takes Executed e into slot i; a size computed from another is
// stale.
func (l *Lucid) served(i int, e float64) {
	if sl := &l.slots[i]; math.Float64bits(e) != math.Float64bits(sl.e) {
		sl.e, sl.lnOK, l.hot[i].remVer = e, false, -1
	}
}

// featuresAt reads the ids of j's features, listed at i, into slot i,
// again only if j's features are not those they were read from.
func (l *Lucid) featuresAt(i int, j *policy.Job) {
	sl, f := &l.slots[i], &l.feats[i]
	if !sl.idsOK || f.user != j.User || f.model != j.Model || f.workers != j.Workers ||
		math.Float64bits(f.fraction) != math.Float64bits(j.Fraction) || math.Float64bits(f.submit) != math.Float64bits(j.Submit) {
		sl.ids, sl.idsOK = l.ids.of(l.est, j), true
		sl.lv = l.ids.levels(&sl.ids)
		*f = lucidFeatures{user: j.User, model: j.Model, workers: j.Workers, fraction: j.Fraction, submit: j.Submit}
		l.unprepare(i, j)
	}
}

// unprepare undoes Prepare's bringing of the entry of j, listed at i,
// whose features moved since: the call would have brought it from the
// features it has now (an entry keeps its fitted terms until the model
// moves, from the features it first saw at that version).
func (l *Lucid) unprepare(i int, j *policy.Job) {
	h := &l.hot[i]
	if p := h.p; p != nil && p.id == j.ID && p.prepAt == int32(l.calls) {
		p.version, p.prepAt, h.remVer = -1, 0, -1
	}
}

// levels is slot sl's levels: those it knows are kept (an interned
// level never changes), the others read again from the ids' tables.
// Reading every term from the tables at every refit cost the default
// setting at 10k × 100k (a refit every decision) ~1 ms a decision.
func (l *Lucid) levels(sl *lucidSlot) *[numTerms]int32 {
	if !levelsFinal(&sl.lv) {
		l.ids.known(&sl.lv, &sl.ids)
	}
	return &sl.lv
}

// levelsFinal reports whether lv can no longer change: every interned
// level is known.
func levelsFinal(lv *[numTerms]int32) bool {
	return lv[termShape] >= 0 && lv[termUser] >= 0 && lv[termModel] >= 0 && lv[termUserShape] >= 0
}

// bring brings slot i's entry to the model's version (predictFrom from
// the slot's feature ids) and returns the ln estimate.
func (l *Lucid) bring(i int) float64 {
	p := l.hot[i].p
	if p.version != l.kk.version {
		p.version, p.main = l.kk.version, l.est.predictLevels(*l.levels(&l.slots[i]))
		if l.kk.preparing {
			p.prepAt = int32(l.calls) + 1
		}
	}
	return p.main + p.ctx
}

// slotSize is sizeFrom from slot i: predicted remaining duration × GPUs.
// A size computed at this version was computed after its entry was
// brought to it (a new entry resets remVer), so neither the entry,
// elsewhere in memory, nor the rest of the slot is read again: ~80,000
// queued jobs at 10k × 100k.
func (l *Lucid) slotSize(i int) float64 {
	h := &l.hot[i]
	if int(h.remVer) != l.kk.version {
		sl := &l.slots[i]
		mu := l.bring(i)
		if !sl.lnOK && sl.e > 0 {
			sl.lne, sl.lnOK = math.Log(sl.e), true
		}
		h.remVer, h.size = int32(l.kk.version), remainingLn(mu, l.kk.sigma, sl.e, sl.lne)*sl.share
	}
	return h.size
}

// fullKey is key for an untracked snapshot, which reads every job: its
// entry is found through the position (byPos), falling back to the map,
// and the job gives the rest, as Order always did. Keeping the slots here
// too cost a second stream of memory per job (~1 ms at 100,000 jobs).
func (l *Lucid) fullKey(j *policy.Job) keyed {
	i := l.posOf(j)
	var p *lucidPred
	if i >= 0 {
		p = l.byPos[i]
	}
	if p == nil || p.gone || p.id != j.ID {
		p = l.entry(j)
		if i >= 0 {
			l.byPos[i] = p
		}
	}
	if l.phase(j, l.now) != profiling {
		return keyed{job: j, k: [3]float64{2, l.sizeFrom(p, j), stateTie(j)}}
	}
	l.predictFrom(p, j) // record the estimate made at submission
	return l.phaseKey(j)
}

// partKey is key for a tracked snapshot's changed job, without what
// depends on the model (a main-phase job's size, set by modelKeys): a
// tracked snapshot's unchanged jobs get this back without being read,
// and the model may have learned since. Its queue (0 in every Lucid
// key) carries the position whose slot it filled, for modelKeys to
// check: a job listed twice under one pointer, once unchanged, may be
// found at the wrong one of its places.
func (l *Lucid) partKey(j *policy.Job) keyed {
	i := l.posOf(j)
	if i >= 0 {
		l.fill(i, j)
		l.featuresAt(i, j) // for bring after later refits, without j
	}
	k := l.phaseKey(j)
	k.queue = int32(i)
	return k
}

// profileEnd is the Executed below which j, running, is in its profiling
// run (−∞: it has none), as phase says: the mover's aux.
func (l *Lucid) profileEnd(j *policy.Job) float64 {
	if !l.profilesNow(j) {
		return math.Inf(-1)
	}
	return l.cfg.ProfileTime
}

// move is Lucid's mover: an unchanged running job's partKey moves with
// its service only when its profiling run ends (key 0 → 2), and then
// it is read again; else the key stays and the slot at i takes the
// service, which modelKeys sizes it from. A key whose slot is another
// place's (partKey's queue) is read too.
func (l *Lucid) move(i int, e *posKey, profileEnd, _, executed float64) bool {
	if int(e.queue) != i || (executed < profileEnd) != (e.k[0] == 0) {
		return false
	}
	l.served(i, executed)
	if h := &l.hot[i]; !h.fixed && e.k[0] == 2 && executed >= profileEnd+l.cfg.ProfileGrace {
		h.fixed = true // past its grace window: main phase, as phase says
	}
	return true
}

// hold is Lucid's mover's shortcut: in a call without reasons a job that
// is never a victim is keyed by its position (sizeKeys), so its service
// is not even taken: ~37,000 running jobs' accruals and slots at 10k ×
// 100k. Its slot then keeps the service it was last sized from, which
// the next call that sizes it takes again (the mover, with reasons, or
// sizeKeys, where an entry is shared).
func (l *Lucid) hold(i int, e *posKey) bool {
	return l.kk.loose && int(e.queue) == i && l.hot[i].fixed
}

// phaseKey is j's key but for a main-phase job's size (k[1], 0 here).
func (l *Lucid) phaseKey(j *policy.Job) keyed {
	if l.phase(j, l.now) != profiling {
		return keyed{job: j, k: [3]float64{2, 0, stateTie(j)}}
	}
	if j.State == policy.Running {
		return keyed{job: j, k: [3]float64{0, float64(j.Workers), queuedAt(j)}}
	}
	return keyed{job: j, k: [3]float64{1, float64(j.Workers), queuedAt(j)}}
}

// modelKeys completes partKey's keys in list order: every entry is
// brought to the model's version (as Order always did) and every
// main-phase job's size is computed from its slot. An unchanged job's
// slot was filled when it last changed; the job is read only where its
// entry was dropped since (reported finished while listed) or where
// partKey filled another place of it.
//
// In a call without reasons, the jobs that can no longer be victims
// rank first, keyed by their position (sizeKeys): their place changes no
// Start or Preempt. At 10k × 100k ~37,000 such running jobs, whose sizes
// shrink with every second run, were re-sized and re-sorted on every
// decision. Their keys are distinct: as ties, they were one run for the
// sort's comparisons (10 ms).
func (l *Lucid) modelKeys(ks []keyed) {
	l.modelKeysPar(ks, lucidWorkersFor(len(ks)))
}

// markSeen records every ranked job's entry as seen now (prune's clock):
// a tracked call reads only changed jobs' entries.
func (l *Lucid) markSeen(ks []keyed) {
	for _, k := range ks {
		if i := int(k.at) - 1; i >= 0 && i < len(l.hot) && l.hot[i].p != nil {
			l.hot[i].p.seen = l.calls
		}
	}
}
