package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// RackTopology gives a cluster measured-style links: nodes of rack r (in
// the order racks first appear) have rackGbps[r mod len] NICs, pairs in a
// rack get the slower NIC, and pairs across racks share oversubscribed
// uplinks: the slower NIC divided by oversub. A cluster without Links (the
// default) is simulated exactly as before.
func RackTopology(c *policy.Cluster, rackGbps []float64, oversub float64) error {
	if len(rackGbps) == 0 || oversub < 1 {
		return fmt.Errorf("topology: want at least one rack speed and oversubscription ≥ 1, got %v and %g", rackGbps, oversub)
	}
	rackIdx := map[string]int{}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		r, ok := rackIdx[n.Rack]
		if !ok {
			r = len(rackIdx)
			rackIdx[n.Rack] = r
		}
		n.LinkGbps = rackGbps[r%len(rackGbps)]
	}
	c.Links = policy.NewLinks()
	for i, a := range c.Nodes {
		for _, b := range c.Nodes[i+1:] {
			g := min(a.LinkGbps, b.LinkGbps)
			if a.Rack != b.Rack {
				g /= oversub
			}
			c.Links.Set(a.Name, b.Name, g)
		}
	}
	return nil
}

// stepTime is the profile's step time for a running gang: with links, at
// the slowest link among the nodes its slots span.
func (e *engine) stepTime(m *profile.Model, shape []int, slots []policy.Slot) float64 {
	links := e.led.cluster.Links
	if links.Len() == 0 || len(shape) < 2 {
		return m.StepTime(shape)
	}
	return m.StepTimeAt(shape, e.bottleneck(slots))
}

func (e *engine) bottleneck(slots []policy.Slot) float64 {
	var nodes []string
	for _, s := range slots {
		seen := false
		for _, n := range nodes {
			seen = seen || n == s.Node
		}
		if !seen {
			nodes = append(nodes, s.Node)
		}
	}
	links := e.led.cluster.Links
	b := 0.0
	for i, x := range nodes {
		for _, y := range nodes[i+1:] {
			g, ok := links.Gbps(x, y)
			if !ok {
				g = min(e.led.cluster.Nodes[e.led.nodeIdx[x]].LinkGbps, e.led.cluster.Nodes[e.led.nodeIdx[y]].LinkGbps)
			}
			if b == 0 || g < b {
				b = g
			}
		}
	}
	return b
}

// Random is the placement-blind baseline of Liquid's evaluation: a gang
// goes to nodes in a random order (seeded by the job, so runs repeat),
// filling each before moving on.
type Random struct{ Seed uint64 }

// Name is "random".
func (Random) Name() string { return "random" }

// Shape depends only on the demand.
func (Random) Shape(_ *policy.Job, d policy.Demand) policy.ShapeKey { return policy.DefaultShape(d) }

// Place fills randomly ordered nodes until the gang is complete.
func (r Random) Place(j *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	h := fnv.New64a()
	h.Write([]byte(j.ID))
	rng := rand.New(rand.NewPCG(r.Seed, h.Sum64()))
	order := rng.Perm(len(c.Nodes))
	var slots []policy.Slot
	for _, ni := range order {
		n := &c.Nodes[ni]
		for gi := range n.GPUs {
			for k := d.FitsOn(&n.GPUs[gi]); k > 0 && len(slots) < d.Workers; k-- {
				slots = append(slots, d.Slot(n.Name, &n.GPUs[gi]))
			}
		}
		if len(slots) == d.Workers {
			return policy.Placement{Slots: slots}, ""
		}
	}
	return policy.Placement{}, "needs " + d.String() + ", not enough free GPUs"
}
