package live

import "github.com/caravan-dl/caravan/scheduler/policy"

// keepCheckpoints reorders a placement's slots so that workers of a
// resumed job land, where the policy's slots allow, on the node (best: the
// GPU) they ran on before. Checkpoint dirs are node-local, so this is what
// lets a preempted worker resume instead of restarting. The set of slots
// is the policy's; only which worker takes which slot changes.
func keepCheckpoints(g gang, p policy.Placement, prev []target) policy.Placement {
	if len(prev) == 0 || len(p.Slots) != len(g.Workers) {
		return p
	}
	was := map[string]target{}
	for _, t := range prev {
		was[t.Worker.Group] = t
	}
	out := make([]policy.Slot, len(p.Slots))
	taken := make([]bool, len(p.Slots))
	placed := make([]bool, len(g.Workers))
	// Two passes: the same GPU first, then the same node.
	for _, sameGPU := range []bool{true, false} {
		for wi, w := range g.Workers {
			t, ok := was[w.Group]
			if placed[wi] || !ok {
				continue
			}
			for si, s := range p.Slots {
				if !taken[si] && s.Node == t.NodeID && (!sameGPU || s.GPU == t.GPU) {
					out[wi], taken[si], placed[wi] = s, true, true
					break
				}
			}
		}
	}
	// Everyone else takes the remaining slots in the policy's order.
	si := 0
	for wi := range g.Workers {
		if placed[wi] {
			continue
		}
		for taken[si] {
			si++
		}
		out[wi], taken[si] = p.Slots[si], true
	}
	return policy.Placement{Slots: out}
}
