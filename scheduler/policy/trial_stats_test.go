package policy_test

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// TrialStats add up over churned preemptive rounds: every victim
// released in the Capacity is preempted or given back (exactly, in a
// round without replayed trials), an eager trial releases every victim
// there, and a lazy one some fewer.
func TestTrialStatsAddUp(t *testing.T) {
	var trials, kept, exact int
	for _, name := range []string{"tiresias-gittins", "tiresias-las"} {
		for seed := uint64(1); seed <= 4; seed++ {
			s := pt.Random(seed, pt.RandomSpec{
				Cluster: pt.ClusterSpec{Racks: 4, NodesPerRack: 8, GPUsPerNode: 8},
				Running: 500, Queued: 800, Busy: 0.95, FracShare: []float64{0, 0.3}[seed%2],
			})
			c := pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 10, Finish: 0.02, Arrive: 10})
			lazy, eager := newPolicy(t, name).(*policy.Framework), newPolicy(t, name).(*policy.Framework)
			eager.EagerTrials = true
			for round := 0; round < 10; round++ {
				want := copyOf(eager.Decide(c.S))
				got := lazy.Decide(c.S)
				for _, side := range []struct {
					f   *policy.Framework
					dec policy.Decision
				}{{eager, want}, {lazy, got}} {
					st := side.f.LastTrialStats()
					out := st.GivenBack + len(side.dec.Preempts)
					if st.Materialised > st.Victims || st.Materialised > out || st.Replayed == 0 && st.Materialised != out {
						t.Fatalf("%s seed %d round %d (eager %v): %+v with %d preempts", name, seed, round, side.f.EagerTrials, st, len(side.dec.Preempts))
					}
					if st.Replayed == 0 {
						exact++
					}
				}
				if st := eager.LastTrialStats(); st.Materialised != st.Victims {
					t.Fatalf("%s seed %d round %d: an eager trial released %d of %d victims in the Capacity", name, seed, round, st.Materialised, st.Victims)
				}
				st := lazy.LastTrialStats()
				trials, kept = trials+st.Trials, kept+st.Victims-st.Materialised
				c.Step(want)
			}
		}
	}
	t.Logf("%d trials, %d victims kept out of the Capacity, %d rounds checked exactly", trials, kept, exact)
	if trials == 0 || kept == 0 || exact == 0 {
		t.Fatalf("untested: %d trials, %d victims kept out, %d exact rounds", trials, kept, exact)
	}
}
