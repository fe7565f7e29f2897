package place

import (
	"math/rand/v2"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// TestSumIndexMatchesScan: the FreeSum index chooses the node the scan
// chooses, through random commits, with sums that tie exactly, sums
// within the scan's 1e-9 tolerance and sums just over it (the index must
// then defer to the scan), and it does answer some searches itself.
func TestSumIndexMatchesScan(t *testing.T) {
	s := pt.Random(5, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 10, GPUsPerNode: 4}})
	rng := rand.New(rand.NewPCG(3, 4))
	used := []float64{0, 0, 0.25, 0.5, 0.5 + 3e-10, 0.5 + 4e-7, 0.75, 0.3, 1}
	for i := range s.Cluster.Nodes {
		for k := range s.Cluster.Nodes[i].GPUs {
			s.Cluster.Nodes[i].GPUs[k].UsedFraction = used[rng.IntN(len(used))]
		}
	}
	logged, plain := policy.NewCapacity(&s.Cluster), policy.NewCapacity(&s.Cluster)
	logged.LogChanges()
	demands := []policy.Demand{{Workers: 1, Fraction: 1}, {Workers: 2, Fraction: 1}, {Workers: 1, Fraction: 0.5},
		{Workers: 2, Fraction: 0.25}, {Workers: 1, Fraction: 0.2}, {Workers: 3, Fraction: 1}}
	answered, deferred := 0, 0
	for step := 0; step < 400; step++ {
		d := demands[rng.IntN(len(demands))]
		m := fits(logged, d)
		if m == nil {
			remember(logged, d, candidates(logged, d))
			m = fits(logged, d)
		}
		if _, ok := m.idx.best(); ok {
			answered++
		} else {
			deferred++
		}
		got, want := m.bestSingleNode(d), bestSingleNode(plain, d)
		if got != want {
			t.Fatalf("step %d, %v: index chose node %d, the scan %d", step, d, got, want)
		}
		if want >= 0 && rng.IntN(3) > 0 {
			p := fillNode(plain, want, d, d.Workers)
			if e1, e2 := logged.Commit(p, 0), plain.Commit(p, 0); e1 != nil || e2 != nil {
				t.Fatalf("step %d: commit %v, %v", step, e1, e2)
			}
		}
	}
	if answered == 0 || deferred == 0 {
		t.Fatalf("index answered %d searches and deferred %d: both must happen", answered, deferred)
	}
	t.Logf("index answered %d searches, deferred %d", answered, deferred)
}

// TestSumIDsAsMap: the open-addressed table answers as a map through
// random additions and deletions of up to maxSumBuckets keys, many of
// them sharing a home slot (long probe runs, wrapping past the end).
func TestSumIDsAsMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var tab sumIDs
	// keys drawn from few homes, the last slots' among them, so probe
	// runs are long and wrap
	var pool []uint64
	homes := map[int]int{}
	for len(pool) < 400 {
		k := rng.Uint64()
		if h := tab.home(k); h < 3 || h > sumSlots-4 {
			if homes[h] < 80 {
				homes[h]++
				pool = append(pool, k)
			}
		}
	}
	want := map[uint64]int32{}
	for step := range 20000 {
		k := pool[rng.IntN(len(pool))]
		id, in := want[k]
		switch got, ok := tab.get(k); {
		case ok != in || got != id:
			t.Fatalf("step %d: get(%#x) = %d, %v; the map has %d, %v", step, k, got, ok, id, in)
		case in && rng.IntN(2) == 0:
			tab.del(k)
			delete(want, k)
		case !in && len(want) < maxSumBuckets:
			id := int32(rng.IntN(maxSumBuckets))
			tab.put(k, id)
			want[k] = id
		}
		if step%5000 == 4999 {
			tab.clear()
			clear(want)
		}
	}
}
