package registry

import (
	"slices"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// listed is s with its jobs in (Submit, ID) order, as a simulator lists
// them (SubmitOrdered), every fifth one finished but still listed, and
// reasons skipped.
func listed(s *policy.Snapshot) *policy.Snapshot {
	c := pt.Clone(s)
	slices.SortFunc(c.Jobs, func(a, b *policy.Job) int {
		if a.Submit != b.Submit {
			if a.Submit < b.Submit {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	for i, j := range c.Jobs {
		if i%5 == 4 && j.State == policy.Queued {
			j.State = policy.Finished
		}
	}
	c.SubmitOrdered, c.SkipReasons = true, true
	return c
}

// The simulator's shortcuts (FIFO's kept listing, incremental 2D-LAS and
// 2D-Gittins ranking, the walk stopping where nothing can start) decide
// exactly as a full ranking of a plain snapshot, cold and in steady state.
func TestListedSnapshotsSameDecisions(t *testing.T) {
	for _, name := range Names() {
		for seed := uint64(1); seed <= 10; seed++ { // seed 7 is the big case
			s := listed(pt.Random(seed, goldenSpec(seed)))
			full, quiet := mustNew(t, name), mustNew(t, name)
			for round := 0; round < 3; round++ {
				plain := pt.Clone(s)
				plain.SubmitOrdered, plain.SkipReasons = false, false
				want, got := full.Decide(plain), quiet.Decide(pt.Clone(s))
				want.Waiting, got.Waiting, want.Ranking, got.Ranking = nil, nil, nil, nil
				if digest(want) != digest(got) {
					t.Fatalf("%s seed=%d round %d: listed snapshot decided %v %v, plain %v %v",
						name, seed, round, got.Preempts, got.Starts, want.Preempts, want.Starts)
				}
				s = pt.Apply(s, want)
				s.Now += 500
			}
		}
	}
}
