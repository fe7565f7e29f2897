package policy

// A lazy trial writes the Capacity GPU by GPU, not victim by victim: a
// victim materialised (flush) or put back (settle, restore) only moves
// its slots' shares into their GPUs' deltas, and sync then writes each
// GPU once and summarises, tracks and logs each node once. Releasing or
// re-committing the victims one by one (Capacity.apply) wrote the same
// GPUs and summarised the same nodes once per victim: lucid's mass
// preemption at 10,000 nodes materialised ~168,000 victim slots a
// decision, ~2.4 per node a flush touched, and put most of them back.
//
// The result is the same bit for bit: every victim of a lazy trial met
// roundTrips' terms (its shares dyadic, no clamp on its GPUs), so a
// GPU's Free plus the summed delta is what adding the shares one at a
// time gives, and each step of that sequence stays within [0, 1]
// (releases only add up to a load add checked, re-commits only take back
// what was released), where clamp01 changes nothing. A node's summary
// is recomputed from its GPUs, and the cluster's FreeSum moves by each
// node's old and new sums: dyadic values, the same in any order. A
// victim put back was not hit by the new gang, so no GPU of it was
// committed since, and the over-commit check a re-commit makes cannot
// fail.

// move adds (sign +1: materialise) or takes back (-1: put back) the
// shares of victim v to its GPUs' deltas.
func (lz *lazyTrial) move(v lazyVictim, sign float64) {
	for s := v.lo; s < v.hi; s++ {
		h := &lz.held[s]
		l := &lz.loads[h.load]
		l.delta += sign * h.frac
		l.deltaMem += int64(sign) * h.mem
		if !l.dirty {
			l.dirty = true
			lz.dirty = append(lz.dirty, h.load)
		}
	}
}

// putBack re-commits the materialised victim at index at of the trial's
// list at the next sync.
func (lz *lazyTrial) putBack(at int) {
	lz.out[at] = false
	lz.move(lz.spans[at], -1)
}

// sync writes each GPU whose delta moved, then summarises, tracks and
// logs each of their nodes once (after all its GPUs are written); a nil
// lz (an eager trial) has nothing to write.
func (lz *lazyTrial) sync(c *Capacity) {
	if lz == nil {
		return
	}
	for _, e := range lz.dirty {
		l := &lz.loads[e]
		c.setFree(l.g, lz.nodes[l.node].ni, l.g.Free+l.delta, l.g.FreeMem+l.deltaMem)
		l.delta, l.deltaMem, l.dirty = 0, 0, false
	}
	lz.pass++
	for _, e := range lz.dirty {
		if nd := &lz.nodes[lz.loads[e].node]; nd.synced != lz.pass {
			nd.synced = lz.pass
			c.nodeChanged(nd.ni)
		}
	}
	lz.dirty = lz.dirty[:0]
}
