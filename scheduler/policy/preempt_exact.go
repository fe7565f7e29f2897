package policy

import (
	"math"
	"slices"
)

// dyadicBits is the binary precision below which roundTrips accepts no
// share: every Free and share a multiple of 2^-dyadicBits (quarters,
// halves, whole GPUs; ~1e-6 apart, far more than eps), their sums are
// exact, so releasing shares and committing them back restores each
// value bit for bit, and the clamps at eps and 1-eps change nothing.
const dyadicBits = 20

// dyadic reports that v ≥ 0 (not -0) is a multiple of 2^-dyadicBits
// below 2^30 (sums of such stay exact).
func dyadic(v float64) bool {
	x := v * (1 << dyadicBits) // exact: a power of two
	return v >= 0 && !math.Signbit(v) && x < 1<<(30+dyadicBits) && x == math.Trunc(x)
}

// gpuLoad is what the victims of a trial hold on one GPU.
type gpuLoad struct {
	g    *FreeGPU
	frac float64
	mem  int64
	next int32 // the node's previous entry, -1 at the end
	ni   int32 // the node's index
	// slots is how many of the victims' slots are on the GPU (0: none
	// since narrow took them out)
	slots int32
}

// roundTrips reports that a trial at rank i that fails would leave the
// capacity as it found it, bit for bit in everything a decision reads:
// releasing every victim below i and re-committing them all (tryVictims,
// restore) only adds and subtracts exact values. It holds when every
// victim resolved, every share and every GPU Free on a node it touches
// is dyadic, no GPU would exceed a whole GPU or its memory with the
// victims released (no clamp), and the cluster total stays exact. Only
// then may a trial known to fail be skipped without changing a float
// the next placement or shortOf reads. (GPU Util is not restored bit for
// bit by a trial either: a re-commit charging nothing clamps a negative
// rounding residue to 0. A DemandMonotone placer does not read Util and
// no utilisation is charged, so it decides nothing; the trial memo's
// digest reads it, which changes only which trials replay, not what they
// decide.) Its cost is a read of the victims, where the trial wrote them
// twice and ran the placer up to log2(victims) times.
//
// Unless fresh, a check that held for a rank at or above an earlier one
// with the capacity unchanged since (no change logged, the same Epoch)
// holds again without reading anything: the victims are a subset of
// that check's (fewer shares on the same GPUs), and r.loads keeps that
// check's sums, which then bound this rank's from above. Where the
// capacity changed but no victim was preempted since r.loads were read
// (a start in between), their sums are checked against the capacity as
// it is now (recheck) instead of reading the victims again.
func (r *round) roundTrips(i int, fresh bool) bool {
	mark, logged := r.cap.Mark()
	if t := &r.trip; !fresh && t.ok && logged && t.mark == mark && t.epoch == r.cap.Epoch && i >= t.i {
		return true
	}
	held, at := r.checkLoads(i, fresh)
	r.trip = tripCheck{ok: held && logged, i: at, mark: mark, epoch: r.cap.Epoch}
	return held
}

// checkLoads is exact's check for rank i, answered from r.loads where no
// victim was preempted since they were read: loads of a rank above i
// (more victims) that hold against the capacity now bound i's (unless
// fresh: then they are narrowed to i's first); loads for i (as read, or
// narrowed) answer as a read would. at is the rank the loads are then
// for.
func (r *round) checkLoads(i int, fresh bool) (held bool, at int) {
	l := r.loaded
	if !l.ok || l.gen != r.victimGen || l.i > i {
		return r.exact(i), i
	}
	if l.i < i && !fresh && r.recheck() {
		r.seen(i, true)
		return true, l.i
	}
	if l.i < i && !r.narrow(i) {
		return r.exact(i), i
	}
	held = r.recheck() // exact's answer: the loads are i's
	r.seen(i, held)
	return held, i
}

// seen tells recheckSeen, if set, an answer recheck gave for rank i.
func (r *round) seen(i int, held bool) {
	if recheckSeen != nil {
		recheckSeen(r, i, held)
	}
}

// recheckSeen, unless nil, is told each answer recheck gave (tests
// compare them with exact's).
var recheckSeen func(r *round, i int, held bool)

// loadsFor is what r.loads were last read for: every victim below rank
// i at the round's victimGen gen (ok false: a read that stopped early).
type loadsFor struct {
	ok     bool
	i, gen int
}

// recheck is exact's answer for the rank r.loads were read for, from
// their sums and the capacity now: the victims' slots resolved and their
// shares were dyadic when read, and stay so while none is preempted;
// what a start can change is the cluster total, each GPU's Free and
// FreeMem, and whether a node's Frees are dyadic.
func (r *round) recheck() bool {
	if !dyadic(r.cap.freeSum) {
		return false
	}
	for _, l := range r.loads {
		if l.slots > 0 && (!r.cap.Nodes[l.ni].exactFree || !(l.g.Free+l.frac <= 1) || l.mem > l.g.TotalMem-l.g.FreeMem) {
			return false
		}
	}
	return true
}

// narrow turns r.loads, read for a rank above i (more victims), into
// rank i's: the shares of the victims ranked between are taken back out
// of their GPUs' sums (futile asks for i's own when the wider loads left
// a gain). Every share is dyadic, so each sum is then, bit for bit, what
// reading i's victims afresh adds up; a GPU none of them holds keeps an
// entry with no slots, which recheck and gainOf pass over. false, with
// the loads spoiled, where a slot is not found (exact then reads them
// afresh).
func (r *round) narrow(i int) bool {
	lo, _ := slices.BinarySearch(r.running, r.loaded.i+1) // the wider loads' first victim
	hi, _ := slices.BinarySearch(r.running, i+1)          // i's first victim
	for k := r.live(hi - 1); k >= lo; k = r.live(k - 1) {
		vr := r.victimRefs(k)
		for s, rf := range vr.refs {
			f, _ := vr.dyadicShare(s)
			e, seen := r.nodes.get(rf.ni)
			for seen && e >= 0 && r.loads[e].g != rf.g {
				e = r.loads[e].next
			}
			if !seen || e < 0 {
				r.loaded.ok = false
				return false
			}
			l := &r.loads[e]
			l.frac, l.mem, l.slots = l.frac-f, l.mem-vr.shares[s].mem, l.slots-1
		}
	}
	r.loaded.i = i
	return true
}

// tripCheck is the last roundTrips check that held.
type tripCheck struct {
	ok    bool
	i     int
	mark  ChangeMark
	epoch int
}

// exact is roundTrips' check for rank i, read afresh into r.loads.
func (r *round) exact(i int) bool {
	r.loaded.ok = false
	if !dyadic(r.cap.freeSum) {
		return false
	}
	loads := r.loads[:0]
	defer func() { r.loads = loads }() // gainOf reads them
	r.nodes.start(len(r.cap.Nodes))
	for k := r.live(len(r.running) - 1); k >= 0 && r.running[k] > i; k = r.live(k - 1) {
		vr := r.victimRefs(k) // a ref per slot: a placement, without reading the job
		if !vr.resolved() {
			return false
		}
		for s, rf := range vr.refs {
			f, ok := vr.dyadicShare(s)
			if !ok {
				return false
			}
			at, seen := r.nodes.get(rf.ni)
			if !seen {
				if !r.cap.Nodes[rf.ni].exactFree {
					return false
				}
				at = -1
			}
			e := at
			for e >= 0 && loads[e].g != rf.g {
				e = loads[e].next
			}
			if e < 0 {
				e = int32(len(loads))
				loads = append(loads, gpuLoad{g: rf.g, next: at, ni: int32(rf.ni)})
				r.nodes.set(rf.ni, e)
			}
			loads[e].frac += f
			loads[e].mem += vr.shares[s].mem
			loads[e].slots++
		}
	}
	r.loaded = loadsFor{ok: true, i: i, gen: r.victimGen} // every victim read
	for _, l := range loads {
		if !(l.g.Free+l.frac <= 1) || l.mem > l.g.TotalMem-l.g.FreeMem {
			return false
		}
	}
	return true
}
