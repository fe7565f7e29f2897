package policy

import "math"

// victimRef is a victim's placement resolved on the round's Capacity.
type victimRef struct {
	refs []slotRef
	err  error
	// ha and hb digest it for the trial memo (victimHash), when hashed
	ha, hb uint64
	hashed bool
	// round is the round (Framework.refRound) that last used the entry
	round uint64
	// what refs were resolved from: the job's slots and utilisation, on
	// which Capacity and GPU layout (Capacity.layout)
	slots  []Slot
	util   uint64
	cap    *Capacity
	layout uint64
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
	j := r.ranked[r.running[k]].Job
	vr := r.f.refCache[j]
	if vr == nil {
		vr = &victimRef{}
		r.f.refCache[j] = vr
	}
	*sl = refSlot{vr: vr, round: r.refRound}
	vr.round = r.refRound
	util := math.Float64bits(r.f.util(j))
	if vr.cap != r.cap || vr.layout != r.cap.layout || vr.util != util || !sameSlots(vr.slots, j.Placement.Slots) {
		vr.refs, vr.err = r.cap.resolve(j.Placement, vr.refs[:0])
		vr.cap, vr.layout, vr.util = r.cap, r.cap.layout, util
		vr.slots = append(vr.slots[:0], j.Placement.Slots...)
		vr.hashed = false
	}
	if !vr.hashed && r.trials != nil && r.trials.on {
		r.victimHash(vr, j.Placement, math.Float64frombits(util))
		vr.hashed = true
	}
	return vr
}

// sameSlots reports whether a and b are the same slots, bit for bit.
func sameSlots(a, b []Slot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Node != y.Node || x.GPU != y.GPU || x.MemMiB != y.MemMiB ||
			math.Float64bits(x.Fraction) != math.Float64bits(y.Fraction) {
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
