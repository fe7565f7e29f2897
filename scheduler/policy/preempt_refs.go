package policy

import "math"

// victimRef is a victim's placement resolved on the round's Capacity.
type victimRef struct {
	refs []slotRef
	err  error
	// ha and hb digest it for the trial memo (victimHash), when hashed
	ha, hb uint64
	hashed bool
	// round is the round (Framework.refRound) that last used the entry:
	// an entry of another round is checked against its job first
	round uint64
	// what refs were resolved from: the job, its slots and utilisation,
	// on which Capacity and GPU layout (Capacity.layout)
	job    *Job
	slots  []Slot
	util   uint64
	cap    *Capacity
	layout uint64
}

// victimRefs resolves the slots of the running job at position k of
// r.running: trial after trial releases and re-commits the same
// lowest-ranked victims, and finding each slot's GPU by node name was a
// quarter of it. The entries live in a slice by position that the
// Framework keeps from round to round (a map by rank was a tenth of a
// preemption-heavy decision). An entry is resolved again only when the
// job at its position is not the one it was resolved for, with the same
// slots bit for bit, on the same Capacity with the same GPU layout: an
// unchanged cluster decided again resolved ~2,000 victims per round by
// node name.
func (r *round) victimRefs(k int) *victimRef {
	vr := &r.refs[k]
	if vr.round == r.refRound {
		return vr
	}
	vr.round = r.refRound
	j := r.ranked[r.running[k]].Job
	util := math.Float64bits(r.f.util(j))
	if vr.job != j || vr.cap != r.cap || vr.layout != r.cap.layout || vr.util != util || !sameSlots(vr.slots, j.Placement.Slots) {
		vr.refs, vr.err = r.cap.resolve(j.Placement, vr.refs[:0])
		vr.job, vr.cap, vr.layout, vr.util = j, r.cap, r.cap.layout, util
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

// victimRefBuffer is the victim refs storage for n running jobs and a
// fresh round stamp: entries (and their slot buffers) are reused.
func (f *Framework) victimRefBuffer(n int) ([]victimRef, uint64) {
	if cap(f.refs) < n {
		f.refs = append(f.refs[:cap(f.refs)], make([]victimRef, n-cap(f.refs))...)
	}
	f.refRound++
	return f.refs[:n], f.refRound
}
