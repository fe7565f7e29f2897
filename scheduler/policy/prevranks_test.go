package policy_test

import (
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// A tracked Framework over FIFO (a PrevRanker) copies what it kept of
// unchanged jobs by their last rank, and decides every churned round
// exactly as an untracked one: Starts, Waiting and Ranking, with an
// untracked round, or one that skips reasons, of its own now and then.
// An Order call between two rounds (a reader ranking on its own) breaks
// the map's link to the Framework's last round, which then ranks by
// position.
func TestFrameworkCopiesByPrevRanks(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		c := churnedSmall(seed)
		s := c.S
		fifo := order.NewFIFO(order.FIFOConfig{Backfill: seed%2 == 0})
		tracked := policy.NewFramework(fifo, place.NewConsolidated())
		plain := policy.NewFramework(order.NewFIFO(order.FIFOConfig{Backfill: seed%2 == 0}), place.NewConsolidated())
		byPrev := 0
		for round := 0; round < 25; round++ {
			want, gen := untracked(plain, s), s.JobGen
			aside := round%7 == 3
			if aside {
				fifo.Order(s)
			}
			if round%9 == 5 {
				s.JobGen = nil // an untracked round in between
			}
			skip := round%11 == 7 // a round that asks for no reasons
			s.SkipReasons = skip
			got := tracked.Decide(s)
			s.JobGen, s.SkipReasons = gen, false
			if skip {
				want.Waiting, want.Ranking = got.Waiting, got.Ranking
			}
			if policy.RankedByPrev(tracked) {
				byPrev++
				if aside {
					t.Fatalf("seed %d round %d: ranked by a map from another Order call", seed, round)
				}
			}
			if !reflect.DeepEqual(want.Starts, got.Starts) || !reflect.DeepEqual(want.Preempts, got.Preempts) ||
				!reflect.DeepEqual(want.Waiting, got.Waiting) || !reflect.DeepEqual(want.Ranking, got.Ranking) {
				t.Fatalf("seed %d round %d: tracked and untracked decisions differ", seed, round)
			}
			c.Step(policy.Decision{Starts: append([]policy.Start(nil), got.Starts...)})
		}
		if byPrev < 12 { // the rounds after an aside, untracked or skipping one rank by position
			t.Fatalf("seed %d: only %d of 25 rounds copied by last rank", seed, byPrev)
		}
	}
}

// A preemptive ordering's tracked round that skips reasons still reads
// every job (the skipping walk) but writes no Ranking; the rounds around
// it, with reasons, rank in full from what it kept, as an untracked
// Framework does, and every round makes the untracked one's starts and
// preemptions.
func TestFrameworkSkipsRankingWithoutReasons(t *testing.T) {
	defer policy.SetSkipWalk(policy.SetSkipWalk(0, false))
	for seed := uint64(1); seed <= 4; seed++ {
		c := churnedSmall(seed)
		s := c.S
		tracked := policy.NewFramework(order.NewSRTFOracle(), place.NewConsolidated())
		plain := policy.NewFramework(order.NewSRTFOracle(), place.NewConsolidated())
		for round := 0; round < 20; round++ {
			skip := round%3 == 1
			want, got := decideSkipping(tracked, plain, s, skip)
			if len(want.Ranking) == 0 {
				t.Fatalf("seed %d round %d: the untracked round ranked nothing", seed, round)
			}
			if skip && len(got.Ranking) != 0 {
				t.Fatalf("seed %d round %d: a round without reasons wrote %d ranks", seed, round, len(got.Ranking))
			}
			if !skip && !reflect.DeepEqual(want.Ranking, got.Ranking) {
				t.Fatalf("seed %d round %d: rankings differ after a round without one", seed, round)
			}
			if !reflect.DeepEqual(want.Starts, got.Starts) || !reflect.DeepEqual(want.Preempts, got.Preempts) {
				t.Fatalf("seed %d round %d: tracked and untracked decisions differ", seed, round)
			}
			c.Step(policy.Decision{Starts: append([]policy.Start(nil), got.Starts...), Preempts: append([]string(nil), got.Preempts...)})
		}
	}
}

// churnedSmall is the churn these tests decide: 24 nodes of 4 GPUs, 40
// running jobs and 300 queued, tracked (JobGen).
func churnedSmall(seed uint64) *pt.Churn {
	sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 6, GPUsPerNode: 4}, Running: 40, Queued: 300, Busy: 0.8, FracShare: 0.2}
	return pt.NewChurn(seed, pt.Random(seed, sp), pt.ChurnSpec{Interval: 300, Finish: 0.2, Arrive: 15, Jobs: sp})
}

// decideSkipping is plain's decision on s untracked, and tracked's, without
// reasons where skip (s is left as it was).
func decideSkipping(tracked, plain policy.Policy, s *policy.Snapshot, skip bool) (want, got policy.Decision) {
	want = untracked(plain, s)
	s.SkipReasons = skip
	got = tracked.Decide(s)
	s.SkipReasons = false
	return want, got
}

// untracked is p's decision on s without its stamps (s is left as it was).
func untracked(p policy.Policy, s *policy.Snapshot) policy.Decision {
	gen := s.JobGen
	s.JobGen = nil
	defer func() { s.JobGen = gen }()
	return p.Decide(s)
}

// An ordering that leaves its ranked jobs to the Framework
// (IndexOrderer: fair, SRTF, 2D-LAS, 2D-Gittins and lucid on a tracked
// snapshot) decides
// every churned round as an untracked Framework does: Starts,
// Preempts, Waiting and Ranking, with rounds that skip reasons (the
// skipping walk, down to a few jobs) among them; and a direct Order
// call still lists every job.
func TestFrameworkReadsJobsLeftToIt(t *testing.T) {
	defer policy.SetSkipWalk(policy.SetSkipWalk(0, false))
	mk := map[string]func() policy.Orderer{
		"fair":             func() policy.Orderer { o, _ := order.NewFair(order.FairConfig{Lease: 1}); return o },
		"srtf-oracle":      func() policy.Orderer { return order.NewSRTFOracle() },
		"tiresias-las":     func() policy.Orderer { o, _ := order.NewLAS(order.QueueConfig{}); return o },
		"tiresias-gittins": func() policy.Orderer { o, _ := order.NewGittins(order.GittinsConfig{}); return o },
		"lucid":            func() policy.Orderer { o, _ := order.NewLucid(order.LucidConfig{}); return o },
	}
	for name, newOrder := range mk {
		left, preempts := 0, 0
		for seed := uint64(1); seed <= 4; seed++ {
			c := churnedSmall(seed)
			s := c.S
			o := newOrder()
			tracked := policy.NewFramework(o, place.NewConsolidated())
			plain := policy.NewFramework(newOrder(), place.NewConsolidated())
			for round := 0; round < 20; round++ {
				skip := round%3 == 1
				want, got := decideSkipping(tracked, plain, s, skip)
				if policy.LeftJobs(tracked) {
					left++
				}
				if skip {
					want.Waiting, want.Ranking = got.Waiting, got.Ranking
				}
				if !reflect.DeepEqual(want.Starts, got.Starts) || !reflect.DeepEqual(want.Preempts, got.Preempts) ||
					!reflect.DeepEqual(want.Waiting, got.Waiting) || !reflect.DeepEqual(want.Ranking, got.Ranking) {
					t.Fatalf("%s seed %d round %d: decisions differ with the jobs left to the Framework", name, seed, round)
				}
				preempts += len(got.Preempts)
				c.Step(policy.Decision{Starts: append([]policy.Start(nil), got.Starts...), Preempts: append([]string(nil), got.Preempts...)})
			}
			for r, x := range o.Order(s) {
				if x.Job == nil {
					t.Fatalf("%s: Order left rank %d's job out", name, r)
				}
			}
		}
		if left < 4*20/2 || preempts == 0 {
			t.Fatalf("%s: %d of %d rounds left their jobs to the Framework, %d preemptions", name, left, 4*20, preempts)
		}
	}
}

// A tracked Framework over 2D-Gittins follows, between decisions, the
// ordering's re-rank of what it learnt by the ordering's map (Prepare
// after a call ranked by changes, a PrevRanker's: jobCache.permuteBy),
// and decides every churned round as an untracked Framework that learns
// the same finished jobs: rounds without reasons (the skipping walk,
// down to a few jobs), one with reasons now and then.
func TestFrameworkFollowsPrepareByPrevRanks(t *testing.T) {
	defer policy.SetSkipWalk(policy.SetSkipWalk(0, false))
	mk := func() *policy.Framework {
		o, err := order.NewGittins(order.GittinsConfig{Prior: []float64{100, 900, 3000, 20000}})
		if err != nil {
			t.Fatal(err)
		}
		return policy.NewFramework(o, place.NewConsolidated())
	}
	followed := 0
	for seed := uint64(1); seed <= 4; seed++ {
		c := churnedSmall(seed)
		s := c.S
		tracked, plain := mk(), mk()
		for round := 0; round < 20; round++ {
			skip := round%5 != 2
			want, got := decideSkipping(tracked, plain, s, skip)
			if skip {
				want.Waiting, want.Ranking = got.Waiting, got.Ranking
			}
			if !reflect.DeepEqual(want.Starts, got.Starts) || !reflect.DeepEqual(want.Preempts, got.Preempts) ||
				!reflect.DeepEqual(want.Waiting, got.Waiting) || !reflect.DeepEqual(want.Ranking, got.Ranking) {
				t.Fatalf("seed %d round %d: decisions differ after re-ranks followed by the map", seed, round)
			}
			c.Step(policy.Decision{Starts: append([]policy.Start(nil), got.Starts...), Preempts: append([]string(nil), got.Preempts...)})
			fin := c.Finished()
			policy.LearnBetween(tracked, fin)
			policy.LearnBetween(plain, fin)
		}
		followed += policy.PreparesFollowed(tracked)
	}
	if followed == 0 {
		t.Fatal("no re-rank was followed by the map: nothing checked")
	}
}
