package policy_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// The skipping walk (walk_skip.go) decides exactly as the walk that
// visits every queued job: the same Starts, Preempts, Waiting (entries
// and order, preempted victims' among them) and Ranking, every round of
// a churn, tracked and untracked. The orderings are the preemptive ones
// (2D-LAS and 2D-Gittins prefix their texts with queues), FIFO with
// backfill (not preemptive) and SRTF on FGD's placement; the queue
// holds jobs that wait for their own reasons (invalid requests, gangs
// larger than the cluster, more memory than any GPU). Every pass is cut into parts of a few jobs on four
// processors, and the walk must have passed jobs over.
func TestSkipWalkSameDecisions(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer policy.SetSplitMin(policy.SetSplitMin(7))
	defer policy.SetSkipWalk(policy.SetSkipWalk(0, false))
	names := []string{"srtf-oracle", "tiresias-las", "tiresias-gittins", "fair", "lucid", "fifo+consolidated", "srtf-oracle+frag-aware"}
	for _, name := range names {
		for _, tracked := range []bool{true, false} {
			skipping, plain := skipWalkPolicy(t, name), skipWalkPolicy(t, name)
			passed, preempts, starts := 0, 0, 0
			skipWalkRounds(tracked, []policy.Policy{skipping, plain}, func(s *policy.Snapshot, round int) policy.Decision {
				want := decideBothWalks(t, fmt.Sprintf("%s (tracked %v)", name, tracked), round, plain, skipping, s)
				passed += policy.SkipWalkPassed(skipping.(*policy.Framework))
				preempts += len(want.Preempts)
				starts += len(want.Starts)
				return want
			})
			if passed == 0 || starts == 0 {
				t.Fatalf("%s (tracked %v): %d ranges passed over, %d starts in 12 rounds: nothing compared", name, tracked, passed, starts)
			}
			t.Logf("%s (tracked %v): %d ranges passed over, %d starts, %d preempts", name, tracked, passed, starts, preempts)
		}
	}
}

// The skipping walk's index keeps each queued job's shape id in its
// entry from round to round (walk_skip_index.go): a tracked round finds
// most queued jobs' shapes kept, an untracked one none, and both decide
// as the walk that visits every job. Where the kept shapes start afresh
// (every other round here, the bound at 0), no entry keeps an id of the
// old set: the decisions are still the plain walk's. The instances
// prepare between rounds (skipWalkRounds): lucid re-ranks, and the
// Framework permutes what it kept by rank, ids included.
func TestSkipWalkKeptShapes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer policy.SetSplitMin(policy.SetSplitMin(7))
	defer policy.SetSkipWalk(policy.SetSkipWalk(0, false))
	defer policy.SetKeptShapes(policy.SetKeptShapes(1024))
	for _, name := range []string{"srtf-oracle", "tiresias-las", "lucid", "tiresias-gittins"} {
		for _, tracked := range []bool{true, false} {
			for _, fresh := range []bool{false, true} {
				skipping, plain := skipWalkPolicy(t, name), skipWalkPolicy(t, name)
				label := fmt.Sprintf("%s (tracked %v, afresh %v)", name, tracked, fresh)
				known, queued := 0, 0
				skipWalkRounds(tracked, []policy.Policy{skipping, plain}, func(s *policy.Snapshot, round int) policy.Decision {
					policy.SetKeptShapes(1024)
					if fresh && round%2 == 1 {
						policy.SetKeptShapes(0)
					}
					want := decideBothWalks(t, label, round, plain, skipping, s)
					k := policy.SkipWalkKnown(skipping.(*policy.Framework))
					if round > 0 && (!fresh || round%2 == 0) {
						known += k
						queued += queuedOf(s)
					}
					if (!tracked || (fresh && round%2 == 1)) && k != 0 {
						t.Fatalf("%s round %d: %d kept shape ids used", label, round, k)
					}
					return want
				})
				if tracked && 2*known < queued {
					t.Fatalf("%s: kept shape ids for %d of %d queued jobs", label, known, queued)
				}
				t.Logf("%s: kept shape ids for %d of %d queued jobs", label, known, queued)
			}
		}
	}
}

// decideBothWalks decides s with plain walking job by job and with
// skipping taking the skipping walk, requires the same decision, and
// returns plain's for the churn to apply.
func decideBothWalks(t *testing.T, label string, round int, plain, skipping policy.Policy, s *policy.Snapshot) policy.Decision {
	t.Helper()
	policy.SetSkipWalk(0, true)
	want := copyOf(plain.Decide(s))
	policy.SetSkipWalk(0, false)
	sameDecision(t, label, round, want, skipping.Decide(s))
	return want
}

// queuedOf counts s's queued jobs.
func queuedOf(s *policy.Snapshot) int {
	n := 0
	for _, j := range s.Jobs {
		if j.State == policy.Queued {
			n++
		}
	}
	return n
}

// skipWalkRounds runs 12 churned rounds of the skipping walk tests'
// snapshot (with jobs that wait for their own reasons): decide decides
// each (JobGen hidden when untracked) and returns the decision the churn
// applies; after the churn's step every policy of ps learns the jobs
// that finished and then prepares (policy.Preparer), as the live
// scheduler has them between rounds.
func skipWalkRounds(tracked bool, ps []policy.Policy, decide func(s *policy.Snapshot, round int) policy.Decision) {
	sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
		Running: 300, Queued: 600, Busy: 0.9, FracShare: 0.5}
	s := withOwnReasons(pt.Random(11, sp))
	c := pt.NewChurn(11, s, pt.ChurnSpec{Interval: 120, Finish: 0.1, Arrive: 15, Jobs: sp, Accrue: true})
	for round := 0; round < 12; round++ {
		gen := s.JobGen
		if !tracked {
			s.JobGen = nil
		}
		d := decide(s, round)
		s.JobGen = gen
		c.Step(d)
		for _, j := range s.Jobs {
			if j.State == policy.Finished {
				for _, p := range ps {
					p.(policy.FinishObserver).ObserveFinished(j)
				}
			}
		}
		for _, p := range ps {
			if pr, ok := p.(policy.Preparer); ok {
				pr.Prepare()
			}
		}
	}
}

// withOwnReasons adds queued jobs that wait for their own reasons: an
// invalid fraction, a negative memory, more memory than any GPU has.
func withOwnReasons(s *policy.Snapshot) *policy.Snapshot {
	for k, mod := range []func(j *policy.Job){
		func(j *policy.Job) { j.Fraction = 1.5 },
		func(j *policy.Job) { j.MemMiB = -1 },
		func(j *policy.Job) { j.MemMiB = 1 << 40 },
	} {
		for n := 0; n < 3; n++ {
			j := pt.Job(fmt.Sprintf("own%d-%d", k, n), 1+n, s.Now-policy.Seconds(100*(k+n)))
			mod(j)
			s.Jobs = append(s.Jobs, j)
		}
	}
	return s
}

// skipWalkPolicy is the registry's policy of that name (FIFO
// backfilling).
func skipWalkPolicy(t *testing.T, name string) policy.Policy {
	t.Helper()
	p, err := registry.New(name, registry.Config{FIFOBackfill: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A preemptive ordering's decision without reasons (Snapshot.SkipReasons)
// takes the skipping walk at scale, as one with reasons does: at 100,000
// jobs the job-by-job walk it took before was three times slower. It
// makes the same Starts (placements too) and Preempts as a decision with
// reasons and as the job-by-job walk without them, writes no Waiting
// but the preempted jobs' (the live scheduler shows them), and visits
// no more jobs than the walk with reasons: a shape no job of which can
// start this round (hopeless) is settled for the whole walk, not
// visited job by job. A third instance switches reasons on and off
// from round to round, as the live scheduler's rounds between two queue
// views do; with reasons its decision is the reasoned one, whole.
func TestSkipReasonsWalksSkipping(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer policy.SetSplitMin(policy.SetSplitMin(7))
	defer policy.SetSkipWalk(policy.SetSkipWalk(0, false))
	names := []string{"srtf-oracle", "tiresias-las", "tiresias-gittins", "fair", "lucid", "srtf-oracle+frag-aware"}
	for _, name := range names {
		for _, tracked := range []bool{true, false} {
			label := fmt.Sprintf("%s (tracked %v)", name, tracked)
			reasoned, lean, plain, mixed := skipWalkPolicy(t, name), skipWalkPolicy(t, name), skipWalkPolicy(t, name), skipWalkPolicy(t, name)
			visits, fewer, starts := 0, 0, 0
			skipWalkRounds(tracked, []policy.Policy{reasoned, lean, plain, mixed}, func(s *policy.Snapshot, round int) policy.Decision {
				want := copyOf(reasoned.Decide(s))
				wantVisits := policy.SkipWalkVisits(reasoned.(*policy.Framework))
				s.SkipReasons = true
				got := copyOf(lean.Decide(s))
				gotVisits := policy.SkipWalkVisits(lean.(*policy.Framework))
				policy.SetSkipWalk(0, true)
				byJob := copyOf(plain.Decide(s))
				policy.SetSkipWalk(0, false)
				s.SkipReasons = round%2 == 1
				both := mixed.Decide(s)
				s.SkipReasons = false
				sameChoices(t, label+" without reasons", round, want, got)
				sameChoices(t, label+" job by job without reasons", round, want, byJob)
				if w := preemptedOnly(want); !slices.Equal(got.Waiting, w) || !slices.Equal(byJob.Waiting, w) {
					t.Fatalf("%s round %d: %d and %d Waits without reasons, want the %d preempted jobs'", label, round, len(got.Waiting), len(byJob.Waiting), len(w))
				}
				if gotVisits == 0 || gotVisits > wantVisits {
					t.Fatalf("%s round %d: the walk without reasons visited %d jobs, with them %d", label, round, gotVisits, wantVisits)
				}
				if round%2 == 1 {
					sameChoices(t, label+" switched", round, want, both)
				} else {
					sameDecision(t, label+" switched", round, want, both)
				}
				visits, fewer, starts = visits+gotVisits, fewer+wantVisits-gotVisits, starts+len(want.Starts)
				return want
			})
			if starts == 0 {
				t.Fatalf("%s: no starts in 12 rounds: nothing compared", label)
			}
			t.Logf("%s: %d starts, %d visits without reasons, %d fewer than with them", label, starts, visits, fewer)
		}
	}
}

// sameChoices requires the same Starts (placements too) and Preempts.
func sameChoices(t *testing.T, name string, round int, want, got policy.Decision) {
	t.Helper()
	if !slices.Equal(want.Preempts, got.Preempts) || len(want.Starts) != len(got.Starts) {
		t.Fatalf("%s round %d: %d/%d starts, %d/%d preempts", name, round,
			len(want.Starts), len(got.Starts), len(want.Preempts), len(got.Preempts))
	}
	for i := range want.Starts {
		if want.Starts[i].JobID != got.Starts[i].JobID || !slices.Equal(want.Starts[i].Placement.Slots, got.Starts[i].Placement.Slots) {
			t.Fatalf("%s round %d: start %d differs: %v / %v", name, round, i, want.Starts[i], got.Starts[i])
		}
	}
}

// preemptedOnly is d's Waits of the jobs it preempts, in order.
func preemptedOnly(d policy.Decision) policy.Waits {
	var w policy.Waits
	for _, x := range d.Waiting {
		if slices.Contains(d.Preempts, x.JobID) {
			w = append(w, x)
		}
	}
	return w
}
