package place

import (
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func TestNetworkAvoidsSlowRack(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 2, NodesPerRack: 2, GPUsPerNode: 2})
	for i := range cl.Nodes {
		if cl.Nodes[i].Rack == "r0" {
			cl.Nodes[i].LinkGbps = 10
		} else {
			cl.Nodes[i].LinkGbps = 100
		}
	}
	j := pt.Job("ddp", 4, 0)
	got := nodesOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j))
	if len(got) != 2 || !strings.HasPrefix(got[0], "r1") || !strings.HasPrefix(got[1], "r1") {
		t.Fatalf("network-aware should use the 100 Gbps rack, got %v", got)
	}
	if c := nodesOf(placeOn(t, NewConsolidated(), policy.NewCapacity(&cl), j)); !strings.HasPrefix(c[0], "r0") {
		t.Fatalf("test premise: consolidated is link-blind and takes r0, got %v", c)
	}
}

func TestNetworkSkipsSlowNodeInRack(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 3, GPUsPerNode: 2})
	cl.Nodes[0].LinkGbps = 1 // the roomiest-first order would take it
	got := nodesOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), pt.Job("j", 4, 0)))
	if len(got) != 2 || got[0] == "r0n0" || got[1] == "r0n0" {
		t.Fatalf("gang should avoid the 1 Gbps node, got %v", got)
	}
}

func TestNetworkBatchModePacksLargestFirst(t *testing.T) {
	run := func(p policy.Placer) map[string]policy.Placement {
		cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 2, GPUsPerNode: 4})
		s := &policy.Snapshot{Now: 10, Cluster: cl, Jobs: []*policy.Job{
			pt.Job("a", 1, 1), pt.Job("b", 1, 2), pt.Job("c", 3, 3), pt.Job("d", 3, 4),
		}}
		d := policy.NewFramework(order.NewFIFO(order.FIFOConfig{Backfill: true}), p).Decide(s)
		if err := pt.Check(s, d); err != nil {
			t.Fatal(err)
		}
		out := map[string]policy.Placement{}
		for _, st := range d.Starts {
			out[st.JobID] = st.Placement
		}
		if len(out) != 4 {
			t.Fatalf("all four jobs fit, started %d", len(out))
		}
		return out
	}
	if imm := run(NewNetwork(NetworkConfig{})); len(nodesOf(imm["d"])) != 2 {
		t.Fatalf("premise: immediate mode splits d over two nodes, got %v", nodesOf(imm["d"]))
	}
	for id, p := range run(NewNetwork(NetworkConfig{BatchSize: 8})) {
		if len(nodesOf(p)) != 1 {
			t.Errorf("batch mode should keep %s on one node, got %v", id, nodesOf(p))
		}
	}
}
