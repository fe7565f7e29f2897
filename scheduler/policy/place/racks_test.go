package place

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// yarnPlaceByScan is yarnPlace as it was before the rack index: every
// rack's whole idle nodes found by a scan over every node (the placement
// then built as yarnPlace builds it). The reference for
// TestYarnRackIndexMatchesScan.
func yarnPlaceByScan(c *policy.Capacity, d policy.Demand) (policy.Placement, bool) {
	if d.Workers <= maxNodeGPUs(c) {
		return onOneNode(c, d)
	}
	largest := 0
	for r := range c.Racks {
		if p, ok := idleNodesByScan(c, d, r); ok {
			return p, true
		}
		s := 0
		for i := range c.Nodes {
			if c.Nodes[i].RackID == r {
				s += len(c.Nodes[i].GPUs)
			}
		}
		largest = max(largest, s)
	}
	if d.Workers > largest {
		return idleNodesByScan(c, d, -1)
	}
	return policy.Placement{}, false
}

func idleNodesByScan(c *policy.Capacity, d policy.Demand, r int) (policy.Placement, bool) {
	need := d.Workers
	var full []int
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if (r >= 0 && n.RackID != r) || len(n.GPUs) == 0 || len(n.GPUs) > need {
			continue
		}
		if n.WholeFree == len(n.GPUs) && nodeFit(n, d) == len(n.GPUs) {
			full = append(full, i)
			need -= len(n.GPUs)
		}
		if need == 0 {
			break
		}
	}
	last := -1
	if need > 0 {
		for i := range c.Nodes {
			n := &c.Nodes[i]
			if (r >= 0 && n.RackID != r) || containsIdx(full, i) {
				continue
			}
			if n.WholeFree >= need && nodeFit(n, d) >= need {
				last = i
				break
			}
		}
		if last < 0 {
			return policy.Placement{}, false
		}
	}
	return takeIdle(c, d, full, last, need), true
}

// TestYarnRackIndexMatchesScan: on random clusters whose racks interleave
// in node order, with uneven nodes (some without GPUs) and GPUs busy at
// random, yarnPlace places every gang exactly as the per-rack scan did,
// committing each placement so later gangs see a fuller cluster, and
// releasing some so nodes come idle again.
func TestYarnRackIndexMatchesScan(t *testing.T) {
	for seed := int64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewSource(seed))
		cl := pt.Cluster(pt.ClusterSpec{Racks: 1 + rng.Intn(6), NodesPerRack: 1 + rng.Intn(6), GPUsPerNode: 8})
		rng.Shuffle(len(cl.Nodes), func(i, j int) { cl.Nodes[i], cl.Nodes[j] = cl.Nodes[j], cl.Nodes[i] })
		for i := range cl.Nodes {
			cl.Nodes[i].GPUs = cl.Nodes[i].GPUs[:[]int{0, 2, 4, 8, 8}[rng.Intn(5)]]
			for g := range cl.Nodes[i].GPUs {
				if rng.Intn(5) == 0 {
					cl.Nodes[i].GPUs[g].UsedFraction = 1
				}
			}
		}
		c := policy.NewCapacity(&cl)
		var placed []policy.Placement
		for step := 0; step < 40; step++ {
			if len(placed) > 0 && rng.Intn(3) == 0 {
				k := rng.Intn(len(placed))
				c.Release(placed[k], 0)
				placed = append(placed[:k], placed[k+1:]...)
			}
			d := policy.Demand{Workers: 1 + rng.Intn(40), Fraction: 1}
			got, gok := yarnPlace(c, d)
			want, wok := yarnPlaceByScan(c, d)
			if gok != wok || !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d, %d workers: got %v %v, want %v %v", seed, step, d.Workers,
					gok, fmt.Sprint(got.Slots), wok, fmt.Sprint(want.Slots))
			}
			if gok {
				if err := c.Commit(got, 0); err != nil {
					t.Fatal(err)
				}
				placed = append(placed, got)
			}
		}
	}
}

// splitByRack lists exactly what inRack does for each rack, in the same
// order, and its parts do not share room: appending to one leaves the
// next as it was.
func TestSplitByRackIsInRackForEveryRack(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		cl := pt.Cluster(pt.ClusterSpec{Racks: 1 + rng.Intn(7), NodesPerRack: 1 + rng.Intn(5), GPUsPerNode: 4})
		rng.Shuffle(len(cl.Nodes), func(i, j int) { cl.Nodes[i], cl.Nodes[j] = cl.Nodes[j], cl.Nodes[i] })
		c := policy.NewCapacity(&cl)
		var cs []candidate
		for i := range c.Nodes {
			if rng.Intn(3) > 0 {
				cs = append(cs, candidate{node: i, fit: 1 + rng.Intn(4)})
			}
		}
		rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		parts := splitByRack(c, cs)
		if len(parts) != len(c.Racks) {
			t.Fatalf("seed %d: %d parts for %d racks", seed, len(parts), len(c.Racks))
		}
		for r := range c.Racks {
			if want := inRack(c, cs, r); !slices.Equal(parts[r], want) {
				t.Fatalf("seed %d rack %d: %v, want %v", seed, r, parts[r], want)
			}
		}
		if len(parts) > 1 {
			next := slices.Clone(parts[1])
			_ = append(parts[0], candidate{node: -1})
			if !slices.Equal(parts[1], next) {
				t.Fatalf("seed %d: appending to rack 0's part changed rack 1's", seed)
			}
		}
	}
}

// BenchmarkRackPlacersWide places a 24-GPU gang (wider than any node) on
// a 10,000-node cluster of 250 racks, idle or with one GPU busy on every
// node (no whole idle node: yarn tries every rack and fails): the cases
// where yarn and the network placer read every node once per rack.
func BenchmarkRackPlacersWide(b *testing.B) {
	j := pt.Job("wide", 24, 0)
	d, _ := policy.DemandOf(j)
	for _, busy := range []bool{false, true} {
		cl := pt.Cluster(pt.ClusterSpec{Racks: 250, NodesPerRack: 40, GPUsPerNode: 8})
		for i := range cl.Nodes {
			if busy {
				cl.Nodes[i].GPUs[0].UsedFraction = 1
			}
		}
		c := policy.NewCapacity(&cl)
		for _, pl := range []policy.Placer{NewYarn(YarnConfig{}), NewNetwork(NetworkConfig{})} {
			b.Run(fmt.Sprintf("%s/busy=%v", pl.Name(), busy), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, why := pl.Place(j, d, c); (why == "") == (busy && pl.Name() == "yarn") {
						b.Fatalf("placed %v, reason %q", why == "", why)
					}
				}
			})
		}
	}
}
