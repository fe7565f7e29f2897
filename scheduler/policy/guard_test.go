package policy_test

import (
	"runtime"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// A ConcurrentGuard asked inside the split rank passes (the job cache's
// when tracked, the plain pass's when not) decides exactly as the same
// guard asked serially, job by job, the way a guard that does not
// declare itself concurrent is: the same Starts, Preempts, Waiting and
// Ranking every round of a churn, tracked and untracked, with every pass
// cut into parts of a few jobs on four processors. The churn's lease is
// short enough that running jobs cross it, and lucid's profiling runs
// end, so answers change from round to round. A GuardHorizon's answers
// kept by the job cache hold exactly as long as asking again would.
func TestConcurrentGuardSameDecisions(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer policy.SetSplitMin(policy.SetSplitMin(7))
	mk := map[string]func() policy.Orderer{
		"fair": func() policy.Orderer {
			o, err := order.NewFair(order.FairConfig{Lease: 470})
			if err != nil {
				t.Fatal(err)
			}
			return o
		},
		"lucid": func() policy.Orderer {
			o, err := order.NewLucid(order.LucidConfig{})
			if err != nil {
				t.Fatal(err)
			}
			return o
		},
	}
	// fair's lease (470 s) ends 10 s before a round, and lucid's rounds
	// are shorter than its profiling run and grace: a GuardHorizon bound
	// kept past its end changes a decision
	interval := map[string]policy.Seconds{"fair": 120, "lucid": 25}
	for name, newOrder := range mk {
		for _, tracked := range []bool{true, false} {
			sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
				Running: 300, Queued: 500, Busy: 0.9, FracShare: 0.5}
			s := pt.Random(9, sp)
			c := pt.NewChurn(9, s, pt.ChurnSpec{Interval: interval[name], Finish: 0.1, Arrive: 15, Jobs: sp, Accrue: true})
			conc := policy.NewFramework(newOrder(), place.NewConsolidated())
			serial := policy.NewFramework(serialGuard(newOrder()), place.NewConsolidated())
			preempts := 0
			for round := 0; round < 12; round++ {
				gen := s.JobGen
				if !tracked {
					s.JobGen = nil
				}
				want := copyOf(serial.Decide(s))
				got := conc.Decide(s)
				s.JobGen = gen
				sameDecision(t, name, round, want, got)
				preempts += len(want.Preempts)
				for _, j := range s.Jobs {
					if j.State == policy.Finished {
						conc.ObserveFinished(j)
						serial.ObserveFinished(j)
					}
				}
				c.Step(want)
			}
			if preempts == 0 {
				t.Fatalf("%s (tracked %v): no preemption in 12 rounds: the guard decided nothing", name, tracked)
			}
		}
	}
}

// serialGuard hides o's ConcurrentGuard: the Framework then asks its
// guard serially. It keeps o's positions (RankIndexer), so a tracked
// round goes through the job cache as o's would, and its learning.
func serialGuard(o policy.Orderer) policy.Orderer {
	g := hiddenGuard{Orderer: o, g: o.(policy.PreemptionGuard)}
	if ix, ok := o.(policy.RankIndexer); ok {
		return indexedGuard{hiddenGuard: g, ix: ix}
	}
	return g
}

type hiddenGuard struct {
	policy.Orderer
	g policy.PreemptionGuard
}

func (h hiddenGuard) CanPreempt(j *policy.Job, now policy.Seconds) bool {
	return h.g.CanPreempt(j, now)
}

func (h hiddenGuard) ObserveFinished(j *policy.Job) {
	if fo, ok := h.Orderer.(policy.FinishObserver); ok {
		fo.ObserveFinished(j)
	}
}

type indexedGuard struct {
	hiddenGuard
	ix policy.RankIndexer
}

func (x indexedGuard) RankIndexes() []int32 { return x.ix.RankIndexes() }
