package place

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// maxLinkSeeds bounds the node sets grown per placement on measured links.
const maxLinkSeeds = 16

// onLinks places a multi-node gang on a cluster with measured pair
// bandwidths (Cluster.Links). From each of the roomiest nodes it grows a
// set greedily, always adding the node whose slowest link to the set is
// fastest (ties: the roomier), until the gang fits; the set's bottleneck
// is the slowest pair inside it, which a ring all-reduce crosses. Sets
// are compared by the job's link-aware step time (compute + all-reduce
// at that bottleneck, policy.LinkSpeedProfile) when it has one, else by
// bottleneck; then by fewer nodes.
func (n *Network) onLinks(c *policy.Capacity, d policy.Demand, cs []candidate, prof policy.SpeedProfile) (option, bool) {
	pool := append([]candidate(nil), cs...)
	byFitDesc(pool)
	var best option
	for _, seed := range pool[:min(len(pool), maxLinkSeeds)] {
		o := n.growFrom(c, d, pool, seed)
		if o.nodes == nil {
			continue
		}
		o.step = linkStep(prof, prefixCounts(o.nodes, d.Workers), o.bottleneck)
		if linkBetter(o, best) {
			best = o
		}
	}
	return best, best.nodes != nil
}

func (n *Network) growFrom(c *policy.Capacity, d policy.Demand, pool []candidate, seed candidate) option {
	reach := make([]float64, len(pool)) // slowest link from each candidate to the set
	in := make([]bool, len(pool))
	for i, cd := range pool {
		reach[i] = math.Inf(1)
		if cd.node == seed.node {
			in[i] = true
		}
	}
	set, got, bottleneck := []candidate{seed}, seed.fit, math.Inf(1)
	last := seed.node
	for got < d.Workers {
		pick := -1
		for i, cd := range pool {
			if in[i] {
				continue
			}
			reach[i] = min(reach[i], n.pair(c, last, cd.node))
			if pick < 0 || reach[i] > reach[pick] || (reach[i] == reach[pick] && cd.fit > pool[pick].fit) {
				pick = i
			}
		}
		if pick < 0 {
			return option{}
		}
		in[pick] = true
		set = append(set, pool[pick])
		got += pool[pick].fit
		bottleneck = min(bottleneck, reach[pick])
		last = pool[pick].node
	}
	return option{nodes: set, bottleneck: bottleneck}
}

// pair is the measured bandwidth between two nodes, or the slower of
// their uplinks when the pair was never measured.
func (n *Network) pair(c *policy.Capacity, a, b int) float64 {
	if g, ok := c.Links.Gbps(c.Nodes[a].Name, c.Nodes[b].Name); ok {
		return g
	}
	return min(n.link(&c.Nodes[a]), n.link(&c.Nodes[b]))
}

func linkStep(prof policy.SpeedProfile, shape []int, gbps float64) float64 {
	switch p := prof.(type) {
	case nil:
		return 0
	case policy.LinkSpeedProfile:
		return p.StepTimeAt(shape, gbps)
	default:
		return p.StepTime(shape)
	}
}

func linkBetter(o, than option) bool {
	if than.nodes == nil {
		return true
	}
	if o.step > 0 && than.step > 0 && !nearlyEqual(o.step, than.step) {
		return o.step < than.step
	}
	if o.bottleneck != than.bottleneck {
		return o.bottleneck > than.bottleneck
	}
	return len(o.nodes) < len(than.nodes)
}
