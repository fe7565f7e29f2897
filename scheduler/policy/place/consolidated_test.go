package place

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// nodesOf lists the distinct nodes of a placement in slot order.
func nodesOf(p policy.Placement) []string {
	var out []string
	for _, s := range p.Slots {
		if len(out) == 0 || out[len(out)-1] != s.Node {
			out = append(out, s.Node)
		}
	}
	return out
}

func placeOn(t *testing.T, pl policy.Placer, c *policy.Capacity, j *policy.Job) policy.Placement {
	t.Helper()
	d, err := policy.DemandOf(j)
	if err != nil {
		t.Fatal(err)
	}
	p, why := pl.Place(j, d, c)
	if why != "" {
		t.Fatalf("%s: %s", j.ID, why)
	}
	util := 0.0
	if u, ok := pl.(policy.UtilPredictor); ok {
		util = u.PredictUtil(j)
	}
	if err := c.Commit(p, util); err != nil {
		t.Fatalf("%s: invalid placement: %v", j.ID, err)
	}
	return p
}

func TestConsolidatedFewestNodesThenRacks(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 2, NodesPerRack: 2, GPUsPerNode: 4})
	busy := pt.Job("busy", 2, 0)
	pt.Run(&cl, busy, pt.Whole("r0n0", 16384, 0, 1)) // r0n0 has 2 free
	c := policy.NewCapacity(&cl)
	pl := NewConsolidated()

	if got := nodesOf(placeOn(t, pl, c, pt.Job("two", 2, 0))); len(got) != 1 || got[0] != "r0n0" {
		t.Fatalf("2 GPUs should best-fit the 2-GPU hole on r0n0, got %v", got)
	}
	if got := nodesOf(placeOn(t, pl, c, pt.Job("four", 4, 0))); len(got) != 1 {
		t.Fatalf("4 GPUs fit one node, got %v", got)
	}
	// 3 nodes with 4 free remain (r0n1 or r1n*): 8 GPUs must use 2 nodes of one rack
	got := nodesOf(placeOn(t, pl, c, pt.Job("eight", 8, 0)))
	if len(got) != 2 || got[0][:2] != got[1][:2] {
		t.Fatalf("8 GPUs should take two nodes of one rack, got %v", got)
	}
}

func TestConsolidatedFractionsShareFullestGPU(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 2})
	cl.Nodes[0].GPUs[1].UsedFraction = 0.5
	c := policy.NewCapacity(&cl)
	j := &policy.Job{ID: "half", Workers: 1, Fraction: 0.5, MemMiB: 1000}
	p := placeOn(t, NewConsolidated(), c, j)
	if p.Slots[0].GPU != 1 {
		t.Fatalf("a half GPU should fill the half-used GPU 1, got %+v", p.Slots)
	}
	if c.WholeFree() != 1 {
		t.Errorf("GPU 0 should stay whole, %d whole free", c.WholeFree())
	}
}

func TestConsolidatedExplainsNoRoom(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 2, GPUsPerNode: 1})
	cl.Nodes[0].GPUs[0].UsedFraction = 0.6
	cl.Nodes[1].GPUs[0].UsedFraction = 0.6
	c := policy.NewCapacity(&cl)
	j := &policy.Job{ID: "x", Workers: 1, Fraction: 0.5}
	d, _ := policy.DemandOf(j)
	if _, why := NewConsolidated().Place(j, d, c); why == "" {
		t.Fatal("0.5 GPU cannot fit in two 0.4 holes")
	}
}
