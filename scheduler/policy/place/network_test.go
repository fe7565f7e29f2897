package place

import (
	"fmt"
	"sort"
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

// fakeSpeed is a speed profile from a table keyed by the shape sorted
// descending ("4,4" style); unknown shapes cost `other`.
type fakeSpeed struct {
	t     map[string]float64
	other float64
}

func (f fakeSpeed) StepTime(shape []int) float64 {
	s := append([]int(nil), shape...)
	sort.Sort(sort.Reverse(sort.IntSlice(s)))
	k := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(s)), ","), "[]")
	if t, ok := f.t[k]; ok {
		return t
	}
	return f.other
}

// shapeOf is workers per node, descending.
func shapeOf(p policy.Placement) []int {
	per := map[string]int{}
	for _, s := range p.Slots {
		per[s.Node]++
	}
	var out []int
	for _, n := range per {
		out = append(out, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

func TestNetworkSpreadsWhenProfileSaysFaster(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 4, GPUsPerNode: 4})
	j := pt.Job("imagenet", 8, 0)
	j.Speed = fakeSpeed{t: map[string]float64{"4,4": 0.56, "3,3,2": 0.45, "2,2,2,2": 0.41}, other: 1}
	got := shapeOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j))
	if fmt.Sprint(got) != "[2 2 2 2]" {
		t.Fatalf("profile says 2222 is fastest, got shape %v", got)
	}
}

func TestNetworkPacksWhenProfileSaysFaster(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 4, GPUsPerNode: 4})
	j := pt.Job("bert", 8, 0)
	j.Speed = fakeSpeed{t: map[string]float64{"4,4": 0.5, "2,2,2,2": 0.9}, other: 1}
	got := shapeOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j))
	if fmt.Sprint(got) != "[4 4]" {
		t.Fatalf("profile says 44 is fastest, got shape %v", got)
	}
	// a tie goes to fewer nodes
	j.Speed = fakeSpeed{other: 0.5}
	if got := shapeOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j)); fmt.Sprint(got) != "[4 4]" {
		t.Fatalf("equal step times should keep the packed shape, got %v", got)
	}
}

func TestNetworkSpreadUsesTightestNodes(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 6, GPUsPerNode: 4})
	// r0n1 and r0n3 have 2 GPUs free; the others are empty
	pt.Run(&cl, pt.Job("a", 2, 0), pt.Whole("r0n1", 0, 0, 1))
	pt.Run(&cl, pt.Job("b", 2, 0), pt.Whole("r0n3", 0, 0, 1))
	j := pt.Job("j", 8, 0)
	j.Speed = fakeSpeed{t: map[string]float64{"2,2,2,2": 0.4}, other: 1}
	p := placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j)
	if fmt.Sprint(shapeOf(p)) != "[2 2 2 2]" {
		t.Fatalf("want 2222, got %v", shapeOf(p))
	}
	used := strings.Join(nodesOf(p), " ")
	if !strings.Contains(used, "r0n1") || !strings.Contains(used, "r0n3") {
		t.Fatalf("spread parts should fill the half-used nodes first, got %v", used)
	}

	// free 1, 3, 4, 4: 332 puts its 2 on the 3-free node, never on the 1
	cl = pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 4, GPUsPerNode: 4})
	pt.Run(&cl, pt.Job("c", 3, 0), pt.Whole("r0n0", 0, 0, 1, 2))
	pt.Run(&cl, pt.Job("d", 1, 0), pt.Whole("r0n1", 0, 0))
	j.Speed = fakeSpeed{t: map[string]float64{"3,3,2": 0.3}, other: 1}
	p = placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j)
	per := map[string]int{}
	for _, s := range p.Slots {
		per[s.Node]++
	}
	if per["r0n0"] != 0 || per["r0n1"] != 2 || per["r0n2"] != 3 || per["r0n3"] != 3 {
		t.Fatalf("want 332 with the 2 on r0n1, got %v", per)
	}
}

func TestNetworkSingleNodeUnlessSpreadMeasuredFaster(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 4, GPUsPerNode: 4})
	j := pt.Job("j", 4, 0)
	j.Speed = fakeSpeed{t: map[string]float64{"4": 0.16, "2,2": 0.38, "2,1,1": 0.24}, other: 1}
	if got := shapeOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j)); fmt.Sprint(got) != "[4]" {
		t.Fatalf("one node is measured fastest, got %v", got)
	}
	j.Speed = fakeSpeed{t: map[string]float64{"4": 0.5, "2,2": 0.3}, other: 1}
	if got := shapeOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j)); fmt.Sprint(got) != "[2 2]" {
		t.Fatalf("profile says 22 beats one node, got %v", got)
	}
}

func TestNetworkUnknownStepTimeKeepsRules(t *testing.T) {
	for _, prof := range []policy.SpeedProfile{nil, fakeSpeed{other: 0}} {
		cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 4, GPUsPerNode: 4})
		pt.Run(&cl, pt.Job("a", 2, 0), pt.Whole("r0n0", 0, 0, 1))
		j := pt.Job("j", 6, 0)
		j.Speed = prof
		with := placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j)
		j.Speed = nil
		without := placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j)
		if fmt.Sprint(with) != fmt.Sprint(without) {
			t.Fatalf("profile %v: got %v, want the profile-blind %v", prof, with, without)
		}
	}
}

// A profile only changes where a gang goes, never whether it fits, so the
// framework's failure memo keyed by the demand stays sound.
func TestNetworkProfileNeverChangesFit(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		s := pt.Random(seed, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 4, GPUsPerNode: 4},
			Running: 30, Queued: 20, Busy: 0.7, FracShare: 0.2})
		for i, j := range s.Jobs {
			if j.State != policy.Queued {
				continue
			}
			d, err := policy.DemandOf(j)
			if err != nil {
				continue
			}
			_, blind := NewNetwork(NetworkConfig{}).Place(j, d, policy.NewCapacity(&s.Cluster))
			j.Speed = fakeSpeed{other: 1 + float64((int(seed)+i)%5)/10, t: map[string]float64{"1,1,1,1": 0.1, "2,2,2,2": 0.2, "1,1": 0.3}}
			c := policy.NewCapacity(&s.Cluster)
			p, aware := NewNetwork(NetworkConfig{}).Place(j, d, c)
			if (blind == "") != (aware == "") {
				t.Fatalf("seed %d job %s: profile-blind %q vs profile-aware %q", seed, j.ID, blind, aware)
			}
			if aware == "" {
				if len(p.Slots) != d.Workers {
					t.Fatalf("seed %d job %s: %d slots for %d workers", seed, j.ID, len(p.Slots), d.Workers)
				}
				if err := c.Commit(p, 0); err != nil {
					t.Fatalf("seed %d job %s: invalid placement: %v", seed, j.ID, err)
				}
			}
		}
	}
}
