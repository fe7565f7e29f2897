package registry

import (
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func smallSpec() pt.RandomSpec {
	return pt.RandomSpec{
		Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 4, GPUsPerNode: 4},
		Running: 40, Queued: 60, Busy: 0.7, FracShare: 0.3, ElasticShare: 0.3,
	}
}

// TestInvariantsOnRandomSnapshots: for every policy and 25 seeds, no GPU is
// over-allocated (fractions ≤ 1, memory ≤ total), gangs are complete, no
// job is preempted and restarted, every queued job is started or explained,
// the snapshot is not mutated, and a fresh policy decides identically.
func TestInvariantsOnRandomSnapshots(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 25; seed++ {
				s := pt.Random(seed, smallSpec())
				orig := pt.Clone(s)
				d := mustNew(t, name).Decide(s)
				if err := pt.Check(s, d); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if !reflect.DeepEqual(s, orig) {
					t.Fatalf("seed %d: Decide mutated the snapshot", seed)
				}
				if again := mustNew(t, name).Decide(pt.Clone(orig)); !reflect.DeepEqual(d, again) {
					t.Fatalf("seed %d: same input, different decision", seed)
				}
			}
		})
	}
}

// TestSomethingHappens guards the invariant test against vacuity: on an
// idle cluster every policy starts jobs.
func TestSomethingHappens(t *testing.T) {
	sp := smallSpec()
	sp.Running = 0
	for _, name := range Names() {
		s := pt.Random(7, sp)
		if d := mustNew(t, name).Decide(s); len(d.Starts) == 0 {
			t.Errorf("%s started nothing on an idle cluster", name)
		}
	}
}

func mustNew(t testing.TB, name string) policy.Policy {
	t.Helper()
	cfg := Config{GittinsPrior: []float64{100, 900, 3000, 20000, 80000}}
	cfg.Queues.PromoteKnob = 2 // exercise starvation promotion too
	p, err := New(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
