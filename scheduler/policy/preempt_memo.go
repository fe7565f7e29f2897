package policy

import (
	"math"
	"math/bits"
	"slices"
)

// CapacityPlacer is implemented by placers whose Place result depends on
// nothing but the demand and the Capacity: its nodes (names, racks, in
// order) and each GPU's Index, Free, FreeMem, TotalMem and Util; not on
// the job, not on state of their own, not on residents or links. For
// them a preemption trial (tryVictims) is a function of the capacity it
// starts from, the demand and the victims it releases, and the
// Framework remembers trials from one round to the next: a trial that
// starts from the same capacity (a 128-bit digest of every GPU's state,
// and the totals bit for bit) with the same demand and the same victims
// in the same order (their resolved slots, shares, memory and
// utilisation) ends the same way, so its recorded outcome and net effect
// on the capacity are replayed instead of releasing and re-committing
// the victims again. An unchanged cluster decided again (a state nobody
// acted on) repeated every trial: srtf-oracle's steady state released
// and re-committed ~400,000 victims per decision.
type CapacityPlacer interface {
	PlacesOnCapacity() bool
}

// minTrialVictims is the fewest victims a trial must release to be
// recorded: replaying a smaller one saves little.
const minTrialVictims = 16

// trialMemoOff turns the trial memo off (tests compare decisions with
// and without it).
var trialMemoOff bool

// maxTrials bounds the trials recorded per round.
const maxTrials = 4096

// trialKey is what a recorded trial started from, but its victims.
type trialKey struct {
	workers   int
	frac, mem uint64
	util      uint64 // the starting job's utilisation (bits)
	a, b      uint64 // the capacity digest
	free      uint64 // FreeSum (bits)
	whole     int
}

// trialEntry is a recorded trial: the victims it released and what came
// of it.
type trialEntry struct {
	n      int    // victims released
	sa, sb uint64 // their sequence digest
	// ok: the gang was placed (slots), preempting the victims at preempt
	// (indexes into the n, in settle's order); else complete is the
	// failure's (a test after the last release)
	ok, complete bool
	// clean and released are the failed-trial bound's (failedTrials)
	clean    bool
	released int
	slots    []Slot
	preempt  []int32
	// diff is the trial's net change to GPUs; free, whole and epoch the
	// totals and Epoch it left
	diff  []gpuDiff
	free  float64
	whole int
	epoch int
}

// trialStore holds the trials of the current and the last round. It is
// on (the digest kept, trials recorded and looked up) only in a round
// after one with a trial worth recording, and after a round whose
// lookups found nothing (a churned cluster: every round starts from a
// new capacity) it backs off for 1, 2, 4 ... 64 rounds.
type trialStore struct {
	cur, prev     map[trialKey][]*trialEntry
	lookups, hits int
	skip, backoff int
	big           bool // a trial released minTrialVictims or more
	recorded      int  // entries recorded this round
	on            bool // this round records and replays
	seq           []int
}

// trialRound starts a round of the Capacity's trial store (nil when the
// round may not use one: usable is false); its on field says whether
// this round records and replays trials.
func (c *Capacity) trialRound(usable bool) *trialStore {
	if !usable || trialMemoOff {
		c.hashOff()
		c.trials = nil
		return nil
	}
	t := c.trials
	if t == nil {
		t = &trialStore{cur: map[trialKey][]*trialEntry{}, prev: map[trialKey][]*trialEntry{}}
		c.trials = t
	}
	switch {
	case t.hits > 0:
		t.backoff = 0
	case t.lookups > 0: // a changed capacity (churn): back off
		t.backoff = min(max(1, 2*t.backoff), 64)
		t.skip = t.backoff
	}
	big := t.big
	t.lookups, t.hits, t.recorded, t.big = 0, 0, 0, false
	t.prev, t.cur = t.cur, t.prev
	clear(t.cur)
	// on only after a round with a trial worth recording: rounds of
	// small trials (LAS' time slices) pay nothing
	t.on = t.skip == 0 && big
	if t.skip > 0 {
		t.skip--
	}
	if !t.on {
		clear(t.prev)
		c.hashOff()
	}
	return t
}

// trialKeyOf is the key of a trial for d by job j, from the capacity now.
func (r *round) trialKeyOf(d Demand, j *Job) trialKey {
	a, b := r.cap.hashOn()
	return trialKey{workers: d.Workers, frac: floatBits(d.Fraction), mem: uint64(d.MemMiB),
		util: math.Float64bits(r.f.util(j)), a: a, b: b, free: math.Float64bits(r.cap.freeSum), whole: r.cap.wholeFree}
}

// victimSeq lists (into t.seq) the positions in r.running of the victims
// a trial for rank i releases, lowest rank first, up to limit (< 0: all),
// with their sequence digest and whether a trial would test after the
// last one listed.
func (r *round) victimSeq(t *trialStore, i, limit int) (seq []int, sa, sb uint64, tested bool) {
	seq = t.seq[:0]
	last := -1
	for k := r.live(len(r.running) - 1); k >= 0 && r.running[k] > i && len(seq) != limit; k = r.live(k - 1) {
		vr := r.victimRefs(k)
		if len(vr.refs) == 0 { // a ref per slot: no placement (the job is not read)
			continue
		}
		sa, sb = mix(sa, vr.ha, hashSeedA), mix(sb, vr.hb, hashSeedB)
		seq, last = append(seq, k), k
	}
	t.seq = seq
	n := len(seq)
	tested = n == 0 || n&(n-1) == 0 || last == 0 || r.running[last-1] <= i
	return seq, sa, sb, tested
}

// replayTrial replays a recorded trial matching key for rank i, if any.
func (r *round) replayTrial(t *trialStore, key trialKey, i int, j *Job) (p Placement, ok, complete, hit bool) {
	if len(t.prev) > 0 {
		t.lookups++
	}
	cur := t.cur[key]
	for _, es := range [2][]*trialEntry{cur, t.prev[key]} {
		for _, e := range es {
			seq, match := r.matches(t, e, i)
			if !match {
				continue
			}
			t.hits++
			t.big = true
			if !slices.Contains(cur, e) {
				t.cur[key] = append(cur, e)
			}
			return r.replay(e, seq, j)
		}
	}
	return Placement{}, false, false, false
}

// matches reports whether a trial for rank i would release e's victims
// and test where e's did, with the victims' positions.
func (r *round) matches(t *trialStore, e *trialEntry, i int) ([]int, bool) {
	limit := e.n
	if !e.ok {
		limit = -1 // a failure released every victim
	}
	seq, sa, sb, tested := r.victimSeq(t, i, limit)
	return seq, len(seq) == e.n && sa == e.sa && sb == e.sb && (e.ok && tested || !e.ok && tested == e.complete)
}

// replay applies e's outcome (victims: the positions of its victims).
func (r *round) replay(e *trialEntry, victims []int, j *Job) (p Placement, ok, complete, hit bool) {
	r.cap.replayDiff(e.diff, e.free, e.whole)
	r.cap.Epoch += e.epoch
	if !e.ok {
		r.failed.clean, r.failed.released = e.clean, e.released
		return Placement{}, false, e.complete, true
	}
	for _, x := range e.preempt {
		r.preempt(victims[x], j)
	}
	return Placement{Slots: append([]Slot(nil), e.slots...)}, true, false, true
}

// recordTrial stores the trial just made for key (victims: the positions
// released, preempt: settle's picks among them), when it released enough
// victims to be worth replaying.
func (r *round) recordTrial(t *trialStore, key trialKey, victims []int, preempt []int32, p Placement, ok, complete bool, epoch0 int) {
	diff := r.cap.endRecord(nil)
	if len(victims) < minTrialVictims || t.recorded >= maxTrials {
		return
	}
	t.big = true
	e := &trialEntry{n: len(victims), ok: ok, complete: complete, diff: diff,
		free: r.cap.freeSum, whole: r.cap.wholeFree, epoch: r.cap.Epoch - epoch0,
		clean: r.failed.clean, released: r.failed.released}
	for _, k := range victims {
		vr := r.victimRefs(k)
		e.sa, e.sb = mix(e.sa, vr.ha, hashSeedA), mix(e.sb, vr.hb, hashSeedB)
	}
	if ok {
		e.slots = append([]Slot(nil), p.Slots...)
		e.preempt = append([]int32(nil), preempt...)
	}
	t.cur[key] = append(t.cur[key], e)
	t.recorded++
}

// victimHash digests a victim's resolved slots (node and GPU position,
// share, memory), its utilisation and whether it resolved: what releasing
// and re-committing it reads.
func (r *round) victimHash(vr *victimRef, p Placement, util float64) {
	a, b := uint64(len(p.Slots))+hashSeedA, uint64(len(p.Slots))+hashSeedB
	if vr.err != nil {
		a, b = ^a, ^b
	}
	u := math.Float64bits(util)
	a, b = mix(a, u, hashMulA), mix(b, u, hashMulB)
	for k, s := range p.Slots {
		rf := vr.refs[k]
		at := uint64(math.MaxUint64)
		if rf.g != nil {
			at = uint64(rf.ni)<<20 ^ uint64(r.cap.gpuPos(rf.g, rf.ni))
		}
		f := math.Float64bits(s.Fraction)
		a = mix(mix(a, at, hashSeedA), f^uint64(s.MemMiB)*hashMulA, hashMulB)
		b = mix(mix(b, f, hashSeedB), at^bits.RotateLeft64(uint64(s.MemMiB), 32), hashMulA)
	}
	vr.ha, vr.hb = a, b
}
