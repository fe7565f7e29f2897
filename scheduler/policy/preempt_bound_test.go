package policy_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// The failed-trial bound (preempt_bound.go) skips only trials that would
// fail with every victim released, so it changes no decision: an
// instance with it and one without decide the same churned snapshots and
// leave the same capacity every round, bit for bit (but GPU Util, which
// no DemandMonotone placer reads: see roundTrips): with shares in
// quarters (released and re-committed exactly, so trials are skipped:
// the bound must skip some) and with shares whose sums round (a skipped
// trial would not leave its float residue, so roundTrips must refuse).
func TestFailedBoundSameDecisions(t *testing.T) {
	defer policy.FailedBoundOff(false)
	for _, name := range []string{"srtf-oracle", "tiresias-las", "tiresias-gittins"} {
		for seed := uint64(1); seed <= 6; seed++ {
			s := pt.Random(seed, pt.RandomSpec{
				Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
				Running: 400, Queued: 600, Busy: 0.95, FracShare: 0.6,
			})
			tenths := seed > 3
			if tenths {
				roundingShares(s)
			}
			c := pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 10, Finish: 0.02, Arrive: 8})
			with, without := newPolicy(t, name), newPolicy(t, name)
			skips0 := policy.FailedBoundOff(false)
			for round := 0; round < 12; round++ {
				c.Step(decideBoth(t, name, seed, round, c.S, with, without, func(off bool) { policy.FailedBoundOff(off) }))
			}
			skips := policy.FailedBoundOff(false) - skips0
			t.Logf("%s seed %d (tenths %v): %d trials skipped", name, seed, tenths, skips)
			if name == "srtf-oracle" && !tenths && skips == 0 {
				t.Errorf("%s seed %d: the bound skipped no trial", name, seed)
			}
		}
	}
}

// roundingShares turns the fractional jobs' shares into ones whose sums
// round (as TestTrialMemoSameDecisions' tenths).
func roundingShares(s *policy.Snapshot) {
	for _, j := range s.Jobs {
		if j.Fraction > 0 && j.Fraction < 1 {
			j.Fraction = j.Fraction*0.9 + 0.0137
			for k := range j.Placement.Slots {
				j.Placement.Slots[k].Fraction = j.Fraction
			}
		}
	}
}

// roundTrips' recheck (a check read before a start, answered from its
// sums against the capacity after it) agrees with a fresh read of the
// victims every time it answers: on dyadic shares, on shares whose sums
// round, and on queued shares that round in pairs (±2^-30 about a
// quarter: a node's sums turn inexact while the cluster's total may come
// back exact).
func TestRecheckAgreesWithExact(t *testing.T) {
	stop := policy.WatchRecheck()
	defer stop()
	for _, name := range []string{"srtf-oracle", "tiresias-las", "tiresias-gittins"} {
		for seed := uint64(1); seed <= 9; seed++ {
			s := pt.Random(seed, pt.RandomSpec{
				Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
				Running: 400, Queued: 600, Busy: 0.95, FracShare: 0.6,
			})
			switch {
			case seed > 6:
				pairedShares(s)
			case seed > 3:
				roundingShares(s)
			}
			c := pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 10, Finish: 0.02, Arrive: 8})
			p := newPolicy(t, name)
			for round := 0; round < 12; round++ {
				c.Step(copyOf(p.Decide(c.S)))
			}
		}
	}
	seen, wrong := stop()
	t.Logf("recheck answered %d times", seen)
	if wrong > 0 {
		t.Fatalf("recheck contradicted a read of the victims %d times of %d", wrong, seen)
	}
	if seen == 0 {
		t.Fatal("recheck never answered")
	}
}

// pairedShares gives the queued fractional jobs shares of a quarter
// plus and minus 2^-30 in turn: not dyadic (roundTrips), but two of them
// sum to a dyadic half.
func pairedShares(s *policy.Snapshot) {
	sign := 1.0
	for _, j := range s.Jobs {
		if j.State != policy.Queued || j.Fraction <= 0 || j.Fraction >= 1 {
			continue
		}
		j.Fraction, sign = 0.25+sign*0x1p-30, -sign
	}
}

// A trial whose victims would let the GPUs host more workers of its gang,
// but still fewer than it has, must fail: futile skips it by the
// placer's total (FitTotaler), where a zero gain alone would not. Victims
// holding more than maxHeldCounted GPUs are read only for a job whose trial
// failed so in the last round: the first round runs the trial, the next
// skips it. Either way the decisions and the capacity are those of an
// instance without the bound.
func TestFutileCountsTotal(t *testing.T) {
	defer policy.FailedBoundOff(false)
	for _, big := range []bool{false, true} {
		if big {
			defer policy.MaxHeldCounted(1)()
		}
		newLAS := func() *policy.Framework {
			las, err := order.NewLAS(order.QueueConfig{})
			if err != nil {
				t.Fatal(err)
			}
			return policy.NewFramework(las, place.NewConsolidated())
		}
		with, without := newLAS(), newLAS()
		var skipped []int64
		for round := range 3 {
			s := totalSnapshot(float64(1000 + round))
			policy.FailedBoundOff(true)
			want := copyOf(without.Decide(s))
			s = totalSnapshot(float64(1000 + round))
			before := policy.FailedBoundOff(false)
			got := with.Decide(s)
			skipped = append(skipped, policy.FailedBoundOff(false)-before)
			sameDecision(t, "tiresias-las", round, want, got)
			if len(got.Starts) != 0 || len(got.Preempts) != 0 {
				t.Fatalf("round %d: started %d, preempted %v: the gang cannot fit", round, len(got.Starts), got.Preempts)
			}
			if policy.FreeState(with) != policy.FreeState(without) {
				t.Fatalf("big %v round %d: the rounds left different capacities", big, round)
			}
		}
		want := []int64{1, 1, 1}
		if big {
			want = []int64{0, 1, 1}
		}
		if !slices.Equal(skipped, want) {
			t.Errorf("big %v: trials skipped by round %v, want %v", big, skipped, want)
		}
	}
}

// totalSnapshot is TestFutileCountsTotal's cluster: four nodes of four
// GPUs, each GPU half held by a victim with 4,000 of its 16,000 MiB, and
// a gang of 50 workers of a quarter GPU and 5,000 MiB. The GPUs host 2
// workers each now (32), 3 with the victims out (48): never 50.
func totalSnapshot(now float64) *policy.Snapshot {
	s := &policy.Snapshot{Now: now}
	for _, name := range []string{"a", "b", "c", "d"} {
		n := policy.Node{Name: name, Rack: "r"}
		for k := range 4 {
			n.GPUs = append(n.GPUs, policy.GPU{Index: k, MemoryMiB: 16000, UsedFraction: 0.5, UsedMemoryMiB: 4000})
			v := &policy.Job{ID: fmt.Sprintf("v%s%d", name, k), State: policy.Running, Workers: 1, Fraction: 0.5,
				MemMiB: 4000, Submit: 1, QueuedSince: 1, Attained: 1e9, Executed: 1e9}
			v.Placement.Slots = []policy.Slot{{Node: name, GPU: k, Fraction: 0.5, MemMiB: 4000}}
			s.Jobs = append(s.Jobs, v)
		}
		s.Cluster.Nodes = append(s.Cluster.Nodes, n)
	}
	s.Jobs = append(s.Jobs, &policy.Job{ID: "q", State: policy.Queued, Workers: 50, Fraction: 0.25, MemMiB: 5000,
		Submit: 2, QueuedSince: 2})
	return s
}
