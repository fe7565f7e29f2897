package place

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// TestConsolidateMemoMatchesFullSearch: a logging Capacity (whose failed
// searches are memoised) places and fails exactly as a plain one through
// random releases, re-commits and placements, and the memo answers some.
// With catchUpSplitMin at 1 every catch-up runs in parts (catchUp).
func TestConsolidateMemoMatchesFullSearch(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(old int) { catchUpSplitMin = old }(catchUpSplitMin)
	for _, least := range []int{1 << 30, 1} {
		catchUpSplitMin = least
		before := catchUpSplits.Load()
		memoMatchesFullSearch(t)
		if least == 1 && catchUpSplits.Load() == before {
			t.Fatal("no memo caught up in parts")
		}
	}
}

func memoMatchesFullSearch(t *testing.T) {
	s := pt.Random(7, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 4},
		Running: 400, Busy: 0.97, FracShare: 0.6})
	logged, plain := policy.NewCapacity(&s.Cluster), policy.NewCapacity(&s.Cluster)
	logged.LogChanges()
	var running, released []policy.Placement
	for _, j := range s.Jobs {
		running = append(running, j.Placement)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	demands := []policy.Demand{{Workers: 1, Fraction: 1}, {Workers: 4, Fraction: 1}, {Workers: 6, Fraction: 1},
		{Workers: 1, Fraction: 0.5, MemMiB: 2048}, {Workers: 3, Fraction: 0.75, MemMiB: 1024}, {Workers: 40, Fraction: 1}}
	hits := 0
	for step := 0; step < 3000; step++ {
		switch k := rng.IntN(10); {
		case k < 3 && len(running) > 0: // release (a preemption trial)
			i := rng.IntN(len(running))
			p := running[i]
			running = append(running[:i], running[i+1:]...)
			logged.Release(p, 0)
			plain.Release(p, 0)
			released = append(released, p)
		case k < 5 && len(released) > 0: // re-commit (a restore)
			p := released[len(released)-1]
			released = released[:len(released)-1]
			if e1, e2 := logged.Commit(p, 0), plain.Commit(p, 0); (e1 == nil) != (e2 == nil) {
				t.Fatalf("step %d: commit %v vs %v", step, e1, e2)
			} else if e1 == nil {
				running = append(running, p)
			}
		default:
			d := demands[rng.IntN(len(demands))]
			if m := fits(logged, d); m != nil {
				hits++
			}
			p1, why1 := consolidate(logged, d)
			p2, why2 := consolidate(plain, d)
			if !reflect.DeepEqual(p1, p2) || why1 != why2 {
				t.Fatalf("step %d, %v: memoised %v %q, full %v %q", step, d, p1, why1, p2, why2)
			}
			if why1 == "" && rng.IntN(2) == 0 {
				if e1, e2 := logged.Commit(p1, 0), plain.Commit(p2, 0); e1 != nil || e2 != nil {
					t.Fatalf("step %d: commit %v, %v", step, e1, e2)
				}
				running = append(running, p1)
			}
		}
	}
	if hits == 0 {
		t.Fatal("the memo never answered: the test exercises nothing")
	}
	t.Logf("%d searches counted from the memo", hits)
}
