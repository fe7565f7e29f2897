package policy_test

import (
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// The preemption trial memo replays trials of a round that starts from
// the same capacity with the same victims (an unchanged snapshot decided
// again) and changes no decision: an instance with it and one without
// decide the same snapshots, unchanged, applied and changed, with shares
// that re-commit bit for bit (quarters) and shares that do not (sums
// that round: the replayed trial must leave the same float residue);
// each round must leave the same capacity bit for bit (every GPU, node
// summary, total and Epoch), and the memo must actually replay trials.
func TestTrialMemoSameDecisions(t *testing.T) {
	defer policy.TrialMemoOff(false)
	for _, name := range []string{"srtf-oracle", "tiresias-las", "tiresias-gittins", "fair", "lucid"} {
		for _, tenths := range []bool{false, true} {
			s := pt.Random(3, pt.RandomSpec{
				Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
				Running: 400, Queued: 300, Busy: 0.95, FracShare: 0.7,
			})
			if tenths {
				for _, j := range s.Jobs {
					if j.Fraction > 0 && j.Fraction < 1 {
						j.Fraction = j.Fraction*0.9 + 0.0137 // sums that round
						for k := range j.Placement.Slots {
							j.Placement.Slots[k].Fraction = j.Fraction
						}
					}
				}
			}
			with, without := newPolicy(t, name), newPolicy(t, name)
			hits := 0
			for round := 0; round < 8; round++ {
				policy.TrialMemoOff(true)
				want := copyOf(without.Decide(s))
				policy.TrialMemoOff(false)
				got := with.Decide(s)
				sameDecision(t, name, round, want, got)
				if f, ok := with.(*policy.Framework); ok {
					_, h := policy.TrialMemoStats(f)
					hits += h
					if policy.CapacityState(f) != policy.CapacityState(without.(*policy.Framework)) {
						t.Fatalf("%s round %d (tenths %v): the rounds left different capacities", name, round, tenths)
					}
				}
				if round == 2 { // a changed snapshot: lookups miss, then hit again
					s = pt.Apply(s, want)
				}
			}
			if name == "srtf-oracle" && hits == 0 {
				t.Errorf("%s (tenths %v): no trial replayed", name, tenths)
			}
			t.Logf("%s (tenths %v): %d trials replayed", name, tenths, hits)
		}
	}
}

func newPolicy(t *testing.T, name string) policy.Policy {
	t.Helper()
	p, err := registry.New(name, registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func copyOf(d policy.Decision) policy.Decision {
	return policy.Decision{Starts: slices.Clone(d.Starts), Preempts: slices.Clone(d.Preempts),
		Waiting: slices.Clone(d.Waiting), Ranking: slices.Clone(d.Ranking)}
}

func sameDecision(t *testing.T, name string, round int, want, got policy.Decision) {
	t.Helper()
	sameChoices(t, name, round, want, got)
	if !slices.Equal(want.Waiting, got.Waiting) || !slices.Equal(want.Ranking, got.Ranking) {
		t.Fatalf("%s round %d: decisions differ: %d/%d waiting, %d/%d ranked", name, round,
			len(want.Waiting), len(got.Waiting), len(want.Ranking), len(got.Ranking))
	}
}
