package policy

import (
	"math"
	"slices"
	"sync/atomic"
)

// victimRef is a victim's placement resolved on the round's Capacity.
type victimRef struct {
	refs []slotRef
	err  error
	// ha and hb digest it for the trial memo (victimHash), when hashed
	ha, hb uint64
	hashed bool
	// round is the round (Framework.refRound) that last used the entry
	round uint64
	// what refs were resolved from: each slot's share and memory (its
	// node and GPU are refs'), the job's utilisation, on which Capacity
	// and GPU layout (Capacity.layout)
	shares []slotShare
	util   uint64
	cap    *Capacity
	layout uint64
	// pos is the job's index in the snapshot when its slots were last
	// found the ones resolved, at the jobCache's JobTrack count seen
	// (pos -1: not known); unchanged since (JobTrack.sameSince), they
	// still are
	pos  int
	seen uint64
}

// resolved reports that every slot of the victim resolved and has its
// share: what the exact-release checks (roundTrips, lazy trials) read.
func (vr *victimRef) resolved() bool { return vr.err == nil && len(vr.shares) == len(vr.refs) }

// dyadicShare is slot s's GPU share where releasing it sums exactly: its
// GPU resolved, the share dyadic and its memory valid (the per-slot term
// of roundTrips and lazy trials); false otherwise.
func (vr *victimRef) dyadicShare(s int) (float64, bool) {
	f := math.Float64frombits(vr.shares[s].frac)
	return f, vr.refs[s].g != nil && dyadic(f) && vr.shares[s].mem >= 0
}

// shares1 reports that the victim's first slot holds less than a whole
// GPU: a gang's workers share alike, so it is a tenant beside others.
func (vr *victimRef) shares1() bool {
	return len(vr.shares) > 0 && math.Float64frombits(vr.shares[0].frac) < 1
}

// refSlot is the victimRef of a position in r.running for one round.
type refSlot struct {
	vr    *victimRef
	round uint64
}

// victimRefs resolves the slots of the running job at position k of
// r.running: trial after trial releases and re-commits the same
// lowest-ranked victims, and finding each slot's GPU by node name was a
// quarter of it. The Framework keeps each victim's entry by job from
// round to round (positions shift as jobs start and finish) and resolves
// it again only when the job's slots (bit for bit), its utilisation, the
// Capacity or its GPU layout changed: a churned LAS round resolved a few
// hundred victims' 8-16 slots each by node name, most of them the last
// round's too, and an unchanged cluster decided again ~2,000.
func (r *round) victimRefs(k int) *victimRef {
	sl := &r.refs[k]
	if sl.round == r.refRound {
		return sl.vr
	}
	j := r.job(r.running[k])
	vr := r.f.refCache[j]
	if vr == nil {
		vr = &victimRef{pos: -1}
		r.f.refCache[j] = vr
	}
	*sl = refSlot{vr: vr, round: r.refRound}
	vr.round = r.refRound
	util := math.Float64bits(r.f.util(j))
	p := r.jobAt(r.running[k])
	if vr.cap != r.cap || vr.layout != r.cap.layout || vr.util != util || !(vr.kept(r, p) || vr.same(r.cap, j.Placement.Slots)) {
		vr.refs, vr.err = r.cap.resolve(j.Placement, vr.refs[:0])
		vr.cap, vr.layout, vr.util = r.cap, r.cap.layout, util
		vr.shares = sharesOf(vr.shares, j.Placement.Slots)
		vr.hashed = false
	}
	vr.pos, vr.seen = p, r.f.jobs.track.updates
	if !vr.hashed && r.trials != nil && r.trials.on {
		r.victimHash(vr, j.Placement, math.Float64frombits(util))
		vr.hashed = true
	}
	return vr
}

// jobAt is the index in the snapshot of the job ranked i, -1 where the
// round does not know it (r.at, set on the tracked path only).
func (r *round) jobAt(i int) int {
	if i >= len(r.at) {
		return -1
	}
	return int(r.at[i]) - 1
}

// kept reports that the job at index p was at p when vr last matched its
// slots, in the last snapshot the jobCache followed, and is unchanged
// since (Snapshot.JobGen's promise covers Placement.Slots), so vr still
// matches them without comparing: a steady round's first trial checks
// every running job ranked below it, ~44,000 at 100,000 jobs, ~1.4 ms of
// CPU with the comparisons. Resolved entries only, on the same Capacity
// and layout (the caller's checks).
func (vr *victimRef) kept(r *round, p int) bool {
	if p >= 0 && p == vr.pos && vr.resolved() && r.f.jobs.track.sameSince(p, vr.seen) {
		r.f.refsKept++
		return true
	}
	return false
}

// keepRefs caches the slots of j's new gang p as just resolved by
// commitPlaced: once started, a job is a victim of a later round, whose
// victimRefs then finds them (when the caller gave it exactly p). Gangs
// of a few slots resolve cheaply and are left out (a burst starts
// thousands). victims are the trial's that settle listed (r.settled).
func (r *round) keepRefs(j *Job, p Placement, victims []int) {
	if !r.preemptive || r.f.refCache == nil || len(p.Slots) < keepMinSlots {
		return
	}
	vr := r.f.refCache[j]
	if vr == nil {
		vr = &victimRef{}
		r.f.refCache[j] = vr
	}
	if cap(vr.refs) < len(p.Slots) {
		r.donate(vr, len(p.Slots), victims)
	}
	// the resolved slots move to the entry, and its old storage becomes
	// the Capacity's scratch for the next start (an 80,001-slot gang's
	// 1.3 MB was copied)
	vr.refs, r.cap.placed, vr.err = r.cap.placed, vr.refs[:0], nil
	vr.shares = sharesOf(vr.shares, p.Slots)
	vr.cap, vr.layout, vr.util = r.cap, r.cap.layout, math.Float64bits(r.f.util(j))
	vr.round, vr.hashed = r.refRound, false
	vr.pos = -1 // a new gang: its job is re-stamped
}

// donate gives vr, about to hold a new gang of n slots, the storage of a
// victim (positions in r.running) settle just preempted that has room: a LAS round that
// preempts an 80,001-slot gang for another allocated and grew 2.5 MB of
// refs for the new one while the old one's lay unused in the cache. The
// victim's entry is left empty, to be resolved again if ever read (its
// slots no longer match it).
func (r *round) donate(vr *victimRef, n int, victims []int) {
	if n < minDonated || victims == nil { // not after a trial's settle
		return
	}
	for _, x := range r.settled {
		d := r.victimRefs(victims[x])
		if d == vr || cap(d.refs) < n || cap(d.shares) < n {
			continue
		}
		vr.refs, vr.shares = d.refs[:0], d.shares[:0]
		d.refs, d.shares, d.cap = nil, nil, nil
		donations.Add(1)
		return
	}
}

// donations counts donate's gifts (tests check that it happens).
var donations atomic.Int64

// minDonated is the smallest gang donate finds storage for.
const minDonated = 1024

// keepMinSlots is the smallest gang keepRefs caches.
const keepMinSlots = 4

// slotShare is a slot's share (bits) and memory.
type slotShare struct {
	frac uint64
	mem  int64
}

func sharesOf(dst []slotShare, slots []Slot) []slotShare {
	dst = slices.Grow(dst[:0], len(slots))
	for _, s := range slots {
		dst = append(dst, slotShare{math.Float64bits(s.Fraction), s.MemMiB})
	}
	return dst
}

// same reports whether slots are, bit for bit, the slots vr resolved on c
// (c's layout unchanged): each on the node and GPU Index of its ref, with
// the same share and memory. An unresolved slot never matches. A gang of
// tens of thousands of slots is compared in parts side by side (an
// 80,001-slot victim took ~0.85 ms, serially).
func (vr *victimRef) same(c *Capacity, slots []Slot) bool {
	if len(slots) != len(vr.refs) || len(slots) != len(vr.shares) {
		return false
	}
	k := splitParts(len(slots))
	if k < 2 {
		return vr.sameRange(c, slots, 0, len(slots))
	}
	var differ atomic.Bool
	split(len(slots), k, func(_, lo, hi int) {
		if !differ.Load() && !vr.sameRange(c, slots, lo, hi) {
			differ.Store(true)
		}
	})
	return !differ.Load()
}

// sameRange is same over the slots [lo, hi).
func (vr *victimRef) sameRange(c *Capacity, slots []Slot, lo, hi int) bool {
	for i := lo; i < hi; i++ {
		s, rf, sh := &slots[i], vr.refs[i], vr.shares[i]
		if rf.g == nil || s.GPU != rf.g.Index || s.MemMiB != sh.mem || math.Float64bits(s.Fraction) != sh.frac ||
			s.Node != c.Nodes[rf.ni].Name {
			return false
		}
	}
	return true
}

// refKeep is how many rounds a victim's entry outlives its last use.
const refKeep = 64

// victimRefBuffer is the per-position victim refs storage for n running
// jobs and a fresh round stamp; every refKeep rounds it drops the cached
// entries of jobs not used as victims since.
func (f *Framework) victimRefBuffer(n int) ([]refSlot, uint64) {
	if cap(f.refs) < n {
		f.refs = append(f.refs[:cap(f.refs)], make([]refSlot, n-cap(f.refs))...)
	}
	f.refRound++
	if f.refCache == nil {
		f.refCache = map[*Job]*victimRef{}
	}
	if f.refRound%refKeep == 0 {
		for j, vr := range f.refCache {
			if vr.round+refKeep < f.refRound {
				delete(f.refCache, j)
			}
		}
	}
	return f.refs[:n], f.refRound
}
