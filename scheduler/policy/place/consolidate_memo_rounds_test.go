package place

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// TestConsolidateMemoAcrossTrackedResets: a logging Capacity reset round
// after round from a tracked cluster (Cluster.Gen), or an untracked one
// (every node re-read, the changed ones logged), keeps its memos through
// the Reset, and places exactly as a fresh Capacity of each round's
// cluster does, while the cluster changes between rounds (nodes
// re-stamped) and the rounds commit and release on the Capacity; every
// other round ends with the Capacity's Idle, which brings every memo up
// to date (policy.MemoIdler).
func TestConsolidateMemoAcrossTrackedResets(t *testing.T) {
	for _, tracked := range []bool{true, false} {
		memoAcrossResets(t, tracked)
	}
}

func memoAcrossResets(t *testing.T, tracked bool) {
	s := pt.Random(11, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 4},
		Running: 400, Busy: 0.9, FracShare: 0.6})
	cl := &s.Cluster
	stamp := uint64(0)
	cl.Gen = make([]uint64, len(cl.Nodes))
	for i := range cl.Gen {
		stamp++
		cl.Gen[i] = stamp
	}
	if !tracked {
		cl.Gen = nil
	}
	rng := rand.New(rand.NewPCG(3, 4))
	demands := []policy.Demand{{Workers: 1, Fraction: 1}, {Workers: 4, Fraction: 1}, {Workers: 6, Fraction: 1},
		{Workers: 1, Fraction: 0.5, MemMiB: 2048}, {Workers: 3, Fraction: 0.75, MemMiB: 1024}, {Workers: 40, Fraction: 1}}
	var logged *policy.Capacity
	carried, caughtUp := 0, 0
	for round := 0; round < 30; round++ {
		logged = logged.Reset(cl)
		logged.LogChanges()
		plain := policy.NewCapacity(cl)
		for _, d := range demands {
			if fits(logged, d) != nil {
				carried++ // a memo of an earlier round, brought up to date
			}
		}
		var placed []policy.Placement
		for step := 0; step < 60; step++ {
			if len(placed) > 0 && rng.IntN(5) == 0 { // a preemption trial
				p := placed[rng.IntN(len(placed))]
				logged.Release(p, 0)
				plain.Release(p, 0)
				continue
			}
			d := demands[rng.IntN(len(demands))]
			p1, why1 := consolidate(logged, d)
			p2, why2 := consolidate(plain, d)
			if !reflect.DeepEqual(p1, p2) || why1 != why2 {
				t.Fatalf("tracked %v round %d step %d, %v: reset %v %q, fresh %v %q", tracked, round, step, d, p1, why1, p2, why2)
			}
			if why1 == "" && rng.IntN(2) == 0 {
				if e1, e2 := logged.Commit(p1, 0), plain.Commit(p2, 0); e1 != nil || e2 != nil {
					t.Fatalf("round %d step %d: commit %v, %v", round, step, e1, e2)
				}
				placed = append(placed, p1)
			}
		}
		if round%2 == 1 {
			caughtUp += idleMemos(t, logged)
		}
		churnNodes(rng, cl, &stamp)
	}
	if caughtUp == 0 {
		t.Fatalf("tracked %v: Idle caught no memo up: the test exercises nothing", tracked)
	}
	if carried == 0 {
		t.Fatalf("tracked %v: no memo outlived a Reset: the test exercises nothing", tracked)
	}
	t.Logf("tracked %v: %d memos carried through a Reset", tracked, carried)
}

// idleMemos calls c's Idle and checks that every memo it keeps is then
// up to date; it returns how many were behind the log before.
func idleMemos(t *testing.T, c *policy.Capacity) (behind int) {
	ms := c.PlacerMemo().(*fitMemos)
	for _, m := range ms.order {
		if changed, ok := c.ChangedSince(m.mark); m.ok && ok && len(changed) > 0 {
			behind++
		}
	}
	c.Idle()
	for _, m := range ms.order {
		if changed, ok := c.ChangedSince(m.mark); m.ok && (!ok || len(changed) > 0) {
			t.Fatalf("%v: a memo %d changes behind after Idle (mark ok %v)", m.d, len(changed), ok)
		}
	}
	return behind
}

// churnNodes changes a few nodes' usage in place, stamping them.
func churnNodes(rng *rand.Rand, cl *policy.Cluster, stamp *uint64) {
	for k := 0; k < 3; k++ {
		i := rng.IntN(len(cl.Nodes))
		for g := range cl.Nodes[i].GPUs {
			gpu := &cl.Nodes[i].GPUs[g]
			gpu.UsedFraction = float64(rng.IntN(5)) / 4
			gpu.UsedMemoryMiB = int64(gpu.UsedFraction * float64(gpu.MemoryMiB))
		}
		*stamp++
		if cl.Gen != nil {
			cl.Gen[i] = *stamp
		}
	}
}
