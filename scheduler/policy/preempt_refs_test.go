package policy_test

import (
	"fmt"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// Large gangs that preempt one another (2D-LAS demotes a 1,200-slot gang
// of eighth GPUs soon after it runs, for the next one) hand the preempted
// gang's resolved slots to the new one (keepRefs, donate): a long-lived
// instance must decide every round as a fresh one does, which resolves
// everything anew, and the storage must actually be handed over.
func TestDonatedRefsSameDecisions(t *testing.T) {
	s := pt.Random(9, pt.RandomSpec{
		Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 16, GPUsPerNode: 8},
		Running: 40, Queued: 40, Busy: 0.1, FracShare: 0.3,
	})
	for k := 0; k < 4; k++ {
		s.Jobs = append(s.Jobs, &policy.Job{ID: fmt.Sprintf("giant%d", k), Workers: 1200, Fraction: 0.125,
			Submit: s.Now - 100, QueuedSince: s.Now - 100, State: policy.Queued, Attained: float64(k)})
	}
	c := pt.NewChurn(4, s, pt.ChurnSpec{Interval: 10, Finish: 0.02, Arrive: 3})
	long := newPolicy(t, "tiresias-las")
	d0 := policy.Donations()
	for round := 0; round < 10; round++ {
		want := copyOf(newPolicy(t, "tiresias-las").Decide(c.S))
		got := long.Decide(c.S)
		sameDecision(t, "tiresias-las", round, want, got)
		c.Step(want)
	}
	if policy.Donations() == d0 {
		t.Fatal("no gang's slot storage was handed over")
	}
}

// A long-lived instance over a tracked snapshot keeps an unchanged
// victim's resolved slots by its stamp (JobTrack), without comparing
// them (running jobs that accrue keep their stamps), and decides every
// churned round as a fresh one does, which resolves every victim anew:
// jobs finish, arrive, start and are preempted between rounds, and
// their entries are then compared or resolved again.
func TestKeptRefsSameDecisions(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		s := pt.Random(seed, pt.RandomSpec{
			Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 8, GPUsPerNode: 8},
			Running: 120, Queued: 200, Busy: 0.9, FracShare: 0.3,
		})
		c := pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 60, Finish: 0.1, Arrive: 10, Accrue: seed%2 == 1})
		long := policy.NewFramework(order.NewSRTFOracle(), place.NewConsolidated())
		preempts := 0
		for round := 0; round < 12; round++ {
			want := copyOf(policy.NewFramework(order.NewSRTFOracle(), place.NewConsolidated()).Decide(c.S))
			got := long.Decide(c.S)
			sameDecision(t, "srtf-oracle", round, want, got)
			preempts += len(want.Preempts)
			c.Step(want)
		}
		// running jobs accrue service without a new stamp (Accrual), or
		// are re-stamped every round and compared
		if kept := policy.RefsKept(long); (kept == 0) == (seed%2 == 1) || preempts == 0 {
			t.Fatalf("seed %d: %d victims kept by stamp, %d preemptions: the path is not exercised", seed, policy.RefsKept(long), preempts)
		}
	}
}
