package sim

import (
	"fmt"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Spread is a deliberately placement-blind baseline placer: one worker per
// node, round-robin over nodes in order, so gangs span as many nodes as
// they can. Comparing it with consolidated and network-aware placement on
// a profiled workload shows what placement is worth.
type Spread struct{}

// Name is "spread".
func (Spread) Name() string { return "spread" }

// Shape depends only on the demand.
func (Spread) Shape(_ *policy.Job, d policy.Demand) policy.ShapeKey { return policy.DefaultShape(d) }

// Place takes one free slot per node per pass until the gang is complete.
func (Spread) Place(_ *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	used := map[[2]int]int{}
	var slots []policy.Slot
	for len(slots) < d.Workers {
		progress := false
		for ni := range c.Nodes {
			if len(slots) == d.Workers {
				break
			}
			n := &c.Nodes[ni]
			for gi := range n.GPUs {
				k := [2]int{ni, gi}
				if d.FitsOn(&n.GPUs[gi]) > used[k] {
					used[k]++
					slots = append(slots, d.Slot(n.Name, &n.GPUs[gi]))
					progress = true
					break
				}
			}
		}
		if !progress {
			return policy.Placement{}, fmt.Sprintf("no room for %s", d)
		}
	}
	return policy.Placement{Slots: slots}, ""
}
