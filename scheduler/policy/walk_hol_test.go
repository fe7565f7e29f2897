package policy_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// The Waits behind a blocked head (walk_hol.go), written by two split
// passes, are the serial loop's: the same entries in the same order,
// the jobs that wait for their own reasons (invalid requests, gangs
// larger than the cluster) among them, every round of a churn, tracked
// and untracked, with parts of a few jobs on four processors.
func TestHolTailSameDecisions(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer policy.SetSplitMin(policy.SetSplitMin(7))
	for _, tracked := range []bool{true, false} {
		split, serial := holPolicy(t), holPolicy(t)
		sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 6, GPUsPerNode: 8},
			Running: 150, Queued: 500, Busy: 0.95, FracShare: 0.3}
		s := withOwnReasons(pt.Random(5, sp))
		c := pt.NewChurn(5, s, pt.ChurnSpec{Interval: 60, Finish: 0.1, Arrive: 10, Jobs: sp})
		blocked, own := 0, 0
		for round := 0; round < 12; round++ {
			gen := s.JobGen
			if !tracked {
				s.JobGen = nil
			}
			old := policy.SetSplitMin(1 << 30)
			want := copyOf(serial.Decide(s))
			policy.SetSplitMin(old)
			got := split.Decide(s)
			s.JobGen = gen
			sameDecision(t, fmt.Sprintf("fifo (tracked %v)", tracked), round, want, got)
			for _, w := range want.Waiting {
				switch {
				case strings.HasPrefix(w.Reason, "head-of-line blocked"):
					blocked++
				case strings.HasPrefix(w.JobID, "own"):
					own++
				}
			}
			c.Step(want)
		}
		if blocked == 0 || own == 0 || policy.HolTailParts(split.(*policy.Framework)) < 2 {
			t.Fatalf("tracked %v: %d Waits behind a blocked head, %d for own reasons, %d parts: nothing compared",
				tracked, blocked, own, policy.HolTailParts(split.(*policy.Framework)))
		}
		t.Logf("tracked %v: %d Waits behind a blocked head, %d for own reasons, in 12 rounds", tracked, blocked, own)
	}
}

// holPolicy is FIFO without backfill: its head blocks the queue.
func holPolicy(t *testing.T) policy.Policy {
	t.Helper()
	p, err := registry.New("fifo", registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
