package policy_test

import (
	"runtime"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// The Framework's per-job passes cut into parts run side by side decide
// exactly as one serial pass: two instances of each ordering decide the
// same churning snapshots, one with every pass serial and one with every
// pass cut into parts of a few jobs on four processors, tracked
// (Snapshot.JobGen: the jobCache's passes) and untracked (rankAll's);
// Starts, Preempts, Waiting and Ranking must be identical every round.
// With -race this also checks that the parts share nothing they write.
func TestSplitSameDecisions(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer policy.SetSplitMin(policy.SetSplitMin(1 << 30))
	for _, name := range []string{"fifo", "srtf-oracle", "tiresias-las", "tiresias-gittins", "fair", "lucid"} {
		for _, tracked := range []bool{true, false} {
			sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
				Running: 300, Queued: 500, Busy: 0.9, FracShare: 0.5}
			s := pt.Random(5, sp)
			c := pt.NewChurn(5, s, pt.ChurnSpec{Interval: 300, Finish: 0.2, Arrive: 15, Jobs: sp})
			serial, parted := newPolicy(t, name), newPolicy(t, name)
			for round := 0; round < 10; round++ {
				gen := s.JobGen
				if !tracked {
					s.JobGen = nil
				}
				policy.SetSplitMin(1 << 30)
				want := copyOf(serial.Decide(s))
				policy.SetSplitMin(7)
				got := parted.Decide(s)
				sameDecision(t, name, round, want, got)
				s.JobGen = gen
				c.Step(want)
			}
		}
	}
}
