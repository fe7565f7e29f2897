package policy_test

import (
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// 2D-Gittins lists its running jobs loosely in decisions without
// reasons, and the Framework sorts the ones a trial reads
// (preempt_loose.go): the decisions, the preempted jobs' reasons and
// the capacity left are those of an instance ranking them exactly,
// round after round of churned snapshots, with lazy trials and eager
// ones, and the loose rounds did sort victims and preempt.
func TestLooseRunningSameDecisions(t *testing.T) {
	const name = "tiresias-gittins"
	for _, eager := range []bool{false, true} {
		sorted, preempts := 0, 0
		for seed := uint64(1); seed <= 8; seed++ {
			c, _, _ := churnedPair(t, name, seed, eager)
			with, without := gittinsWithPrior(t, eager), gittinsWithPrior(t, eager)
			exact := without.(*policy.Framework).Order.(*order.Gittins)
			exact.ExactRunning = true
			loose := with.(*policy.Framework).Order.(*order.Gittins)
			for round := 0; round < 10; round++ {
				c.S.SkipReasons = true
				want := copyOf(without.Decide(c.S))
				got := with.Decide(c.S)
				if !loose.RunningLoose() || exact.RunningLoose() {
					t.Fatalf("seed %d round %d: loose %v, exact %v", seed, round, loose.RunningLoose(), exact.RunningLoose())
				}
				sameChoices(t, name, round, want, got)
				if !slices.Equal(preemptedOnly(want), preemptedOnly(got)) {
					t.Fatalf("seed %d round %d: the preempted jobs' reasons differ", seed, round)
				}
				if policy.FreeState(with.(*policy.Framework)) != policy.FreeState(without.(*policy.Framework)) {
					t.Fatalf("seed %d round %d: the rounds left different capacities", seed, round)
				}
				sorted += with.(*policy.Framework).LastTrialStats().LooseSorted
				preempts += len(want.Preempts)
				c.Step(want)
			}
		}
		if sorted == 0 || preempts == 0 {
			t.Errorf("eager %v: %d victims sorted, %d preempted: the comparison decided nothing", eager, sorted, preempts)
		}
		t.Logf("eager %v: %d victims sorted, %d preempted", eager, sorted, preempts)
	}
}

// gittinsWithPrior is 2D-Gittins with a prior of services spread over
// the churned jobs' (policytest.Random: up to thousands of GPU-seconds),
// so running jobs' indexes differ and their order is not their
// queue-join order.
func gittinsWithPrior(t *testing.T, eager bool) policy.Policy {
	t.Helper()
	var prior []float64
	for v := 5.0; v < 40000; v *= 1.15 {
		prior = append(prior, v)
	}
	p, err := registry.New("tiresias-gittins", registry.Config{GittinsPrior: prior})
	if err != nil {
		t.Fatal(err)
	}
	p.(*policy.Framework).EagerTrials = eager
	return p
}
