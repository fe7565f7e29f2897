package place

import (
	"math/rand/v2"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// Harder is what the Framework's failed-trial bound rests on: on random
// capacities, whenever consolidate fails for a demand it fails for every
// demand Harder declares harder (and the relation must hold often enough
// to be tested).
func TestHarderFailsWherever(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pl := NewConsolidated()
	fracs := []float64{0.25, 0.3, 0.5, 0.7, 0.75, 1}
	mems := []int64{0, 1024, 4096, 12000, 40000}
	demand := func() policy.Demand {
		return policy.Demand{Workers: 1 + rng.IntN(12), Fraction: fracs[rng.IntN(len(fracs))], MemMiB: mems[rng.IntN(len(mems))]}
	}
	pairs := 0
	for seed := uint64(0); seed < 40; seed++ {
		s := pt.Random(seed, pt.RandomSpec{
			Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 3, GPUsPerNode: 4},
			Running: 60, Busy: 0.5 + 0.5*rng.Float64(), FracShare: 0.6,
		})
		for k := 0; k < 200; k++ {
			a, b := demand(), demand()
			if !pl.Harder(a, b) {
				continue
			}
			if _, why := consolidate(policy.NewCapacity(&s.Cluster), a); why == "" {
				continue
			}
			pairs++
			if p, why := consolidate(policy.NewCapacity(&s.Cluster), b); why == "" {
				t.Fatalf("seed %d: %v failed but the harder %v placed: %v", seed, a, b, p.Slots)
			}
		}
	}
	if pairs < 100 {
		t.Fatalf("only %d failing pairs tested", pairs)
	}
}

// CountsFits is what the Framework's gain bound rests on: on random
// capacities, consolidate fails exactly when Demand.FitsOn summed over
// every GPU is below the gang's workers.
func TestCountsFitsExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	fracs := []float64{0.25, 0.3, 0.5, 0.75, 1}
	mems := []int64{0, 1024, 4096, 12000, 40000}
	fails := 0
	for seed := uint64(0); seed < 40; seed++ {
		s := pt.Random(seed, pt.RandomSpec{
			Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 3, GPUsPerNode: 4},
			Running: 60, Busy: 0.5 + 0.5*rng.Float64(), FracShare: 0.6,
		})
		c := policy.NewCapacity(&s.Cluster)
		for k := 0; k < 100; k++ {
			d := policy.Demand{Workers: 1 + rng.IntN(16), Fraction: fracs[rng.IntN(len(fracs))], MemMiB: mems[rng.IntN(len(mems))]}
			sum := 0
			for ni := range c.Nodes {
				for gi := range c.Nodes[ni].GPUs {
					sum += d.FitsOn(&c.Nodes[ni].GPUs[gi])
				}
			}
			_, why := consolidate(c, d)
			if (why != "") != (sum < d.Workers) {
				t.Fatalf("seed %d: %v: %d workers fit, consolidate says %q", seed, d, sum, why)
			}
			if why != "" {
				fails++
			}
		}
	}
	if fails < 100 {
		t.Fatalf("only %d failures tested", fails)
	}
}
