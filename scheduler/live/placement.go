package live

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// target is where one worker goes: a node and one of its GPUs.
type target struct {
	Worker   worker
	NodeID   string
	GPU      int
	UUID     string
	Fraction float64
	MemMiB   int64
}

// encodePlacement renders targets for the caravan.placement meta key:
// "group=node/gpu/uuid/fraction/memMiB" joined by ";". Restarted schedulers
// read it back, so what is admitted is known from Nomad alone.
func encodePlacement(ts []target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s=%s/%d/%s/%s/%d", t.Worker.Group, t.NodeID, t.GPU, t.UUID,
			strconv.FormatFloat(t.Fraction, 'g', -1, 64), t.MemMiB)
	}
	return strings.Join(parts, ";")
}

// decodePlacement parses encodePlacement's output.
func decodePlacement(s string) ([]target, error) {
	if s == "" {
		return nil, nil
	}
	var ts []target
	for _, part := range strings.Split(s, ";") {
		group, rest, ok := strings.Cut(part, "=")
		f := strings.Split(rest, "/")
		if !ok || len(f) != 5 {
			return nil, fmt.Errorf("placement %q: want group=node/gpu/uuid/fraction/memMiB", part)
		}
		gpu, err1 := strconv.Atoi(f[1])
		frac, err2 := strconv.ParseFloat(f[3], 64)
		mem, err3 := strconv.ParseInt(f[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("placement %q: bad number", part)
		}
		ts = append(ts, target{Worker: worker{Group: group}, NodeID: f[0], GPU: gpu, UUID: f[2], Fraction: frac, MemMiB: mem})
	}
	return ts, nil
}

// toPolicy turns targets into the policy's placement (nodes by ID).
func toPolicy(ts []target) policy.Placement {
	p := policy.Placement{Slots: make([]policy.Slot, len(ts))}
	for i, t := range ts {
		p.Slots[i] = policy.Slot{Node: t.NodeID, GPU: t.GPU, Fraction: t.Fraction, MemMiB: t.MemMiB}
	}
	return p
}

// resolve maps the policy's slots onto a gang's workers and real GPUs.
func resolve(g gang, p policy.Placement, nodes map[string]*nodeInfo) ([]target, error) {
	if len(p.Slots) != len(g.Workers) {
		return nil, fmt.Errorf("placement has %d slots for %d workers", len(p.Slots), len(g.Workers))
	}
	ts := make([]target, len(p.Slots))
	for i, s := range p.Slots {
		n := nodes[s.Node]
		if n == nil {
			return nil, fmt.Errorf("placement names unknown node %q", s.Node)
		}
		if s.GPU < 0 || s.GPU >= len(n.GPUs) {
			return nil, fmt.Errorf("placement names GPU %d on node %s, which has %d", s.GPU, n.Name, len(n.GPUs))
		}
		frac := s.Fraction
		if frac <= 0 {
			frac = 1
		}
		ts[i] = target{Worker: g.Workers[i], NodeID: n.ID, GPU: s.GPU, UUID: n.GPUs[s.GPU].UUID, Fraction: frac, MemMiB: s.MemMiB}
	}
	return ts, nil
}

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
