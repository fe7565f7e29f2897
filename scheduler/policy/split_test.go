package policy_test

import (
	"runtime"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// The Framework's per-job passes cut into parts run side by side decide
// exactly as one serial pass: two instances of every policy decide the
// same churning snapshots, one with every pass serial and one with every
// pass cut into parts of a few jobs on four processors, tracked
// (Snapshot.JobGen: the jobCache's passes) and untracked (rankAll's),
// over a cluster whose nodes are re-read in parts (Capacity.Reset);
// Starts, Preempts, Waiting and Ranking must be identical every round,
// and so must the capacity each round leaves, bit for bit.
// With -race this also checks that the parts share nothing they write.
func TestSplitSameDecisions(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer policy.SetSplitMin(policy.SetSplitMin(1 << 30))
	for _, name := range registry.Names() {
		for _, tracked := range []bool{true, false} {
			sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
				Running: 300, Queued: 500, Busy: 0.9, FracShare: 0.5}
			s := pt.Random(5, sp)
			c := pt.NewChurn(5, s, pt.ChurnSpec{Interval: 300, Finish: 0.2, Arrive: 15, Jobs: sp})
			serial, parted := newPolicy(t, name), newPolicy(t, name)
			sf, isFramework := serial.(*policy.Framework)
			pf, _ := parted.(*policy.Framework)
			digests := uint64(0)
			for round := 0; round < 6; round++ {
				gen := s.JobGen
				if !tracked {
					s.JobGen = nil
				}
				policy.SetSplitMin(1 << 30)
				want := copyOf(serial.Decide(s))
				policy.SetSplitMin(7)
				got := parted.Decide(s)
				sameDecision(t, name, round, want, got)
				if isFramework && (policy.CapacityState(pf) != policy.CapacityState(sf) || policy.CapacityDigest(pf) != policy.CapacityDigest(sf)) {
					t.Fatalf("%s round %d (tracked %v): the rounds left different capacities", name, round, tracked)
				}
				if isFramework {
					digests += min(policy.CapacityDigest(pf)[0], 1)
				}
				s.JobGen = gen
				c.Step(want)
			}
			if digests > 0 {
				t.Logf("%s (tracked %v): %d rounds with the digest on", name, tracked, digests)
			}
		}
	}
}
