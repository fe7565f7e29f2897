package policy_test

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// A trial whose victims share GPUs tests its batch and bisects by the
// consolidated placer's fit count, and places the gang once, with the
// fewest victims out (trialTest, fewest). Its decisions are those of an
// instance that places the gang at every test, and it leaves the same
// capacity, round after round of churned snapshots: with shares in
// quarters (every round trip exact) and with shares whose sums round,
// lazy trials and eager ones. The counts must answer tests, and fewer
// placements be made. (Counting is for gangs of countMinWorkers or more;
// here every gang counts.)
func TestCountTestsSameDecisions(t *testing.T) {
	defer policy.CountTestsOff(false)
	defer policy.CountMinWorkers(1)() // every gang of these small clusters
	var placedWith, placedWithout int
	for _, eager := range []bool{false, true} {
		for _, name := range []string{"srtf-oracle", "tiresias-las", "tiresias-gittins", "lucid"} {
			counted, with, without := 0, 0, 0
			for seed := uint64(1); seed <= 8; seed++ {
				c, pw, po := countTestsAgree(t, name, seed, eager)
				counted, with, without = counted+c, with+pw, without+po
			}
			t.Logf("%s (eager %v): %d count tests; placer calls %d against %d", name, eager, counted, with, without)
			if counted == 0 {
				t.Errorf("%s (eager %v): no count test", name, eager)
			}
			placedWith, placedWithout = placedWith+with, placedWithout+without
		}
	}
	if placedWith >= placedWithout {
		t.Errorf("placer calls %d with count tests, %d without: none saved", placedWith, placedWithout)
	}
}

// countTestsAgree decides 12 churned rounds of one seed with and without
// count tests, failing on any difference; it returns the count tests and
// the placer calls of each instance.
func countTestsAgree(t *testing.T, name string, seed uint64, eager bool) (counted, placedWith, placedWithout int) {
	c, with, without := churnedPair(t, name, seed, eager)
	fw, fo := with.(*policy.Framework), without.(*policy.Framework)
	for round := 0; round < 12; round++ {
		want := decideBoth(t, name, seed, round, c.S, with, without, policy.CountTestsOff)
		sw, so := fw.LastTrialStats(), fo.LastTrialStats()
		if so.Counted != 0 {
			t.Fatalf("%s seed %d round %d: %d count tests with them off", name, seed, round, so.Counted)
		}
		counted, placedWith, placedWithout = counted+sw.Counted, placedWith+sw.PlacerCalls, placedWithout+so.PlacerCalls
		c.Step(want)
	}
	return counted, placedWith, placedWithout
}

// churnedPair is a churn of one seed's random snapshot (busy, with
// shares; shares that round for even seeds, a larger cluster past seed
// 6) and two instances of ordering name, eager or lazy in their trials,
// for tests that decide it with and without a feature.
func churnedPair(t *testing.T, name string, seed uint64, eager bool) (c *pt.Churn, with, without policy.Policy) {
	sp := pt.RandomSpec{
		Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
		Running: 400, Queued: 600, Busy: 0.95, FracShare: 0.6,
	}
	if seed > 6 { // lazy trials leave victims out of the capacity here
		sp.Cluster.Racks, sp.Cluster.NodesPerRack, sp.Running, sp.Queued = 6, 16, 1600, 2000
	}
	s := pt.Random(seed, sp)
	if seed%2 == 0 {
		roundingShares(s)
	}
	c = pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 10, Finish: 0.02, Arrive: 8})
	with, without = newPolicy(t, name), newPolicy(t, name)
	with.(*policy.Framework).EagerTrials, without.(*policy.Framework).EagerTrials = eager, eager
	return c, with, without
}

// decideBoth decides s with without (the feature turned off by off(true))
// and with with (off(false)), fails on any difference in the decisions
// or the capacities they leave, and returns without's decision.
func decideBoth(t *testing.T, name string, seed uint64, round int, s *policy.Snapshot, with, without policy.Policy, off func(bool)) policy.Decision {
	t.Helper()
	return decidePair(t, name, seed, round, s, with, without, off, policy.FreeState)
}

// decidePair is decideBoth comparing the capacities by state (FreeState,
// or FreeGPUs where the feature changes how often the Epoch moves).
func decidePair(t *testing.T, name string, seed uint64, round int, s *policy.Snapshot, with, without policy.Policy,
	off func(bool), state func(*policy.Framework) string) policy.Decision {
	t.Helper()
	off(true)
	want := copyOf(without.Decide(s))
	off(false)
	got := with.Decide(s)
	sameDecision(t, name, round, want, got)
	if state(with.(*policy.Framework)) != state(without.(*policy.Framework)) {
		t.Fatalf("%s seed %d round %d: the rounds left different capacities", name, seed, round)
	}
	return want
}
