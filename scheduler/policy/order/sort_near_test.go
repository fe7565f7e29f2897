package order

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// The near sort (sort_near.go) orders as the full sort does: keys sorted
// once, then moved a little (each crossing a few neighbours), some
// dropped and some new ones listed, serially and split across 2 to 5
// workers; and where the keys moved far, serially, it gives up (the full
// sort then runs) and backs off.
func TestSortNearMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	before := nearSorts.Load()
	for trial := 0; trial < 300; trial++ {
		w := 1 + trial%5
		withSplit(w, func() { nearTrial(t, rng, trial, w) })
	}
	if n := nearSorts.Load() - before; n < 200 {
		t.Errorf("%d of 300 near sorts kept within their budget: the sorted path went untested", n)
	}
}

func nearTrial(t *testing.T, rng *rand.Rand, trial, w int) {
	t.Helper()
	var sc scratch
	last := tiedKeys(rng, 1+rng.IntN(400))
	idx := sc.order(slices.Clone(last))
	sc.remember(last, slices.Clone(idx))
	// this call: most keys kept (some nudged), a tenth dropped, a few new
	far := trial%7 == 0
	var ks []keyed
	var prev []int32
	for i, k := range last {
		if rng.IntN(10) == 0 {
			continue
		}
		if rng.IntN(3) == 0 && math.Abs(k.k[0]) > 1e4 { // a spread key: past a neighbour or two
			k.k[0] += rng.NormFloat64() * 5e3
		}
		if far && rng.IntN(3) == 0 {
			k.k[0] = rng.NormFloat64() * 1e6
		}
		ks, prev = append(ks, k), append(prev, int32(i))
	}
	for range rng.IntN(5) {
		ks, prev = append(ks, tiedKeys(rng, 1)[0]), append(prev, -1)
	}
	want := slices.Clone(ks)
	slices.SortStableFunc(want, compareReference)
	got, ok := sc.sortNear(ks, prev)
	if !ok {
		if !far && len(ks) > 100 {
			t.Logf("trial %d: near sort gave up on %d keys nudged", trial, len(ks))
		}
		if sc.near.skip == 0 {
			t.Fatalf("trial %d: a near sort that gave up did not back off", trial)
		}
		return
	}
	if far && w == 1 && len(ks) > 200 { // split, each part keeps a budget; the joins merge

		t.Fatalf("trial %d: %d keys moved far, yet the near sort kept within its budget", trial, len(ks))
	}
	if len(got) != len(ks) {
		t.Fatalf("trial %d: %d ranks for %d keys", trial, len(got), len(ks))
	}
	for i, x := range got {
		if ks[x].job != want[i].job || ks[x].k != want[i].k {
			t.Fatalf("trial %d: rank %d is %v, want %v", trial, i, ks[x], want[i])
		}
	}
}

// fair and lucid, which sort in full every call, rank calls 200 ms apart
// from their last order (the near sort) exactly as with the full sort:
// the same Starts, Preempts, Waiting and Ranking every round of a
// churning tracked sequence, split and serial; and near sorts must run.
func TestNearSortSameDecisions(t *testing.T) {
	defer func() { nearSortOff = false }()
	orderings := map[string]func() policy.Orderer{
		"fair":  func() policy.Orderer { o, _ := NewFair(FairConfig{}); return o },
		"lucid": func() policy.Orderer { o, _ := NewLucid(LucidConfig{}); return o },
	}
	for name, mk := range orderings {
		before := nearSorts.Load()
		for seed := uint64(1); seed <= 4; seed++ {
			for _, w := range []int{1, 3} {
				withSplit(w, func() { sameNear(t, name, mk, seed) })
			}
		}
		t.Logf("%s: %d near sorts", name, nearSorts.Load()-before)
		if name == "fair" && nearSorts.Load() == before {
			t.Errorf("%s: no near sort ran", name)
		}
	}
}

func sameNear(t *testing.T, name string, mk func() policy.Orderer, seed uint64) {
	t.Helper()
	sp := pt.RandomSpec{
		Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 4, GPUsPerNode: 8},
		Running: 60 + int(seed*17%50), Queued: 150 + int(seed*31%200), Busy: 0.9, FracShare: 0.3,
	}
	s := pt.Random(seed, sp)
	c := pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 0.2, Finish: 0.01, Arrive: 1, Jobs: sp, Accrue: true})
	near := policy.NewFramework(mk(), place.NewConsolidated())
	full := policy.NewFramework(mk(), place.NewConsolidated())
	for round := 0; round < 12; round++ {
		nearSortOff = true
		want := full.Decide(s)
		nearSortOff = false
		got := near.Decide(s)
		if !reflect.DeepEqual(want.Starts, got.Starts) || !reflect.DeepEqual(want.Preempts, got.Preempts) ||
			!slices.Equal(want.Waiting, got.Waiting) || !slices.Equal(want.Ranking, got.Ranking) {
			t.Fatalf("%s seed=%d round %d: the near sort decided otherwise:\n%v %v\nvs the full sort\n%v %v",
				name, seed, round, got.Starts, got.Ranking, want.Starts, want.Ranking)
		}
		want.Ranking, want.Waiting = slices.Clone(want.Ranking), slices.Clone(want.Waiting)
		c.Step(want)
	}
}
