package place

import (
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// fourByFour is 4 nodes × 4 GPUs in one rack, with busy GPUs per node.
func fourByFour(busy ...int) policy.Cluster {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 4, GPUsPerNode: 4})
	for n, k := range busy {
		var gpus []int
		for g := 0; g < k; g++ {
			gpus = append(gpus, g)
		}
		pt.Run(&cl, pt.Job("busy"+cl.Nodes[n].Name, k, 0), pt.Whole(cl.Nodes[n].Name, 16384, gpus...))
	}
	return cl
}

func tryPlace(pl policy.Placer, c *policy.Capacity, j *policy.Job) (policy.Placement, string) {
	d, _ := policy.DemandOf(j)
	return pl.Place(j, d, c)
}

func TestYarnNeverSplitsAGangANodeCouldHold(t *testing.T) {
	// 2+2+2 GPUs free on three nodes, the fourth node idle: 4 GPUs go there.
	cl := fourByFour(2, 2, 2, 0)
	c := policy.NewCapacity(&cl)
	if got := nodesOf(placeOn(t, NewYarn(YarnConfig{}), c, pt.Job("four", 4, 0))); len(got) != 1 || got[0] != "r0n3" {
		t.Fatalf("4 GPUs should take the idle node, got %v", got)
	}
	// Now only 2+2+2 free: 6 GPUs in total, but no node holds 4.
	if p, why := tryPlace(NewYarn(YarnConfig{}), c, pt.Job("four2", 4, 0)); why == "" {
		t.Fatalf("yarn split a 4-GPU gang over partly free nodes: %v", nodesOf(p))
	} else if !strings.Contains(why, "on one node") {
		t.Fatalf("reason %q should say the gang needs one node", why)
	}
	// consolidated would split it: that is the relaxed baseline
	if _, why := tryPlace(NewConsolidated(), c, pt.Job("four3", 4, 0)); why != "" {
		t.Fatalf("consolidated should spread the gang: %s", why)
	}
}

func TestYarnFirstFitOnOneNode(t *testing.T) {
	cl := fourByFour(1, 0, 3, 0) // free 3, 4, 1, 4
	c := policy.NewCapacity(&cl)
	if got := nodesOf(placeOn(t, NewYarn(YarnConfig{}), c, pt.Job("three", 3, 0))); got[0] != "r0n0" {
		t.Fatalf("first node with 3 free is r0n0, got %v", got)
	}
}

func TestYarnWideGangNeedsWholeIdleNodes(t *testing.T) {
	pl := NewYarn(YarnConfig{})
	// 8 GPUs on 4-GPU nodes: one GPU busy on each of three nodes leaves 13
	// free GPUs but only one idle node, so no placement.
	cl := fourByFour(1, 1, 1, 0)
	if p, why := tryPlace(pl, policy.NewCapacity(&cl), pt.Job("eight", 8, 0)); why == "" {
		t.Fatalf("8 GPUs placed without two idle nodes: %v", p.Slots)
	} else if !strings.Contains(why, "whole idle nodes") {
		t.Fatalf("reason %q should ask for whole idle nodes", why)
	}
	// Two idle nodes: exactly those two.
	cl = fourByFour(1, 0, 1, 0)
	got := nodesOf(placeOn(t, pl, policy.NewCapacity(&cl), pt.Job("eight", 8, 0)))
	if len(got) != 2 || got[0] != "r0n1" || got[1] != "r0n3" {
		t.Fatalf("8 GPUs should take the idle nodes r0n1 and r0n3, got %v", got)
	}
	// 6 GPUs: one idle node plus 2 on the first node with 2 free.
	cl = fourByFour(3, 2, 0, 0)
	got = nodesOf(placeOn(t, pl, policy.NewCapacity(&cl), pt.Job("six", 6, 0)))
	if len(got) != 2 || got[0] != "r0n2" || got[1] != "r0n1" {
		t.Fatalf("6 GPUs should take idle r0n2 and the remainder on r0n1, got %v", got)
	}
}

func TestYarnStaysInOneRack(t *testing.T) {
	pl := NewYarn(YarnConfig{})
	// two racks of 2 × 4 GPUs; one idle node in each rack: 8 GPUs cannot go.
	cl := pt.Cluster(pt.ClusterSpec{Racks: 2, NodesPerRack: 2, GPUsPerNode: 4})
	pt.Run(&cl, pt.Job("a", 1, 0), pt.Whole("r0n0", 16384, 0))
	pt.Run(&cl, pt.Job("b", 1, 0), pt.Whole("r1n0", 16384, 0))
	if p, why := tryPlace(pl, policy.NewCapacity(&cl), pt.Job("eight", 8, 0)); why == "" {
		t.Fatalf("8 GPUs spanned racks: %v", nodesOf(p))
	}
	// a gang larger than any rack may span racks
	cl = pt.Cluster(pt.ClusterSpec{Racks: 2, NodesPerRack: 2, GPUsPerNode: 4})
	if got := nodesOf(placeOn(t, pl, policy.NewCapacity(&cl), pt.Job("twelve", 12, 0))); len(got) != 3 {
		t.Fatalf("12 GPUs should take three idle nodes across racks, got %v", got)
	}
}

// profile steps ratio× slower on any multi-node shape.
type profile struct{ ratio float64 }

func (p profile) StepTime(shape []int) float64 {
	if len(shape) > 1 {
		return p.ratio
	}
	return 1
}

func TestYarnRelaxesOnlyCheapSpreads(t *testing.T) {
	pl := NewYarn(YarnConfig{Profiled: true})
	cl := fourByFour(2, 2, 2, 2)
	cheap, costly := pt.Job("cheap", 4, 0), pt.Job("costly", 4, 0)
	cheap.Speed, costly.Speed = profile{1.02}, profile{1.5}
	if _, why := tryPlace(pl, policy.NewCapacity(&cl), costly); !strings.Contains(why, "spreading would cost 50 %") {
		t.Fatalf("a model 50 %% slower spread must wait, got %q", why)
	}
	if got := nodesOf(placeOn(t, pl, policy.NewCapacity(&cl), cheap)); len(got) != 2 {
		t.Fatalf("a model 2 %% slower spread may spread, got %v", got)
	}
	if _, why := tryPlace(NewYarn(YarnConfig{}), policy.NewCapacity(&cl), cheap); why == "" {
		t.Fatal("strict yarn must not relax for a profiled job")
	}
	d, _ := policy.DemandOf(cheap)
	if k := pl.Shape(cheap, d); k.Extra == k.Extra {
		t.Fatal("profiled jobs must not share failure memos")
	}
}
