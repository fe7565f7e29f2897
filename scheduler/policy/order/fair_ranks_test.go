package order

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// TestRhoRanksMatchSort checks fair's ranking of tracked snapshots kept
// in rank order (rhoRanks) against a fresh instance's full sort of the
// same snapshot on every call, RankIndexes and PrevRanks with it,
// serially and with the passes split down to a few jobs a part. The
// churn shrinks the list, moves jobs, re-stamps them (0 now and then),
// repeats IDs and Submits (NaN and ±Inf among them), and lets running
// jobs accrue; Now moves by 0.2 s (the insertion keeps the last order)
// or by up to 1,200 s; and with the near sort off (0.2 s apart), every
// call sorts in full (sortFull, as where the insertion runs out of moves).
func TestRhoRanksMatchSort(t *testing.T) {
	defer func() { nearSortOff = false }()
	for _, w := range []int{1, 3} {
		withSplit(w, func() {
			for _, mode := range []struct{ small, off bool }{{true, false}, {false, false}, {true, true}} {
				nearSortOff = mode.off
				rhoRanksMatchSort(t, mode.small)
			}
		})
	}
}

func rhoRanksMatchSort(t *testing.T, small bool) {
	rc, nearly := rankCheck{t: t, name: "fair"}, 0
	for seed := int64(1); seed <= 40; seed++ {
		c := &serviceChurn{submitChurn{rng: rand.New(rand.NewSource(seed)), s: &policy.Snapshot{JobGen: []uint64{}}, nan: seed%5 == 0}}
		o := mustFair(t)
		rc.begin(seed)
		for step := 0; step < 100; step++ {
			c.step()
			if small {
				c.s.Now = float64(step) * 0.2
			}
			rc.check(c, o, func() policy.Orderer { return mustFair(t) }, step)
		}
		nearly += o.rr.nearly
	}
	rc.enough(40 * 100)
	if small && !nearSortOff && nearly == 0 {
		t.Fatalf("calls 0.2 s apart: no insertion kept within its budget")
	}
	if nearSortOff && nearly != 0 {
		t.Fatalf("near sort off, yet %d calls kept the last order", nearly)
	}
}

func mustFair(t *testing.T) *Fair {
	t.Helper()
	o, err := NewFair(FairConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// rhoRanks' full sort splits its radix passes and its runs of keys that
// share the top bits into parts; a run longer than a part is sorted whole
// by the part it starts in. Keys from a few values (runs across several
// parts) and ties down to position sort as one full comparison sort does.
func TestRhoSortFullRuns(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, w := range []int{1, 5} {
		withSplit(w, func() {
			for trial := 0; trial < 20; trial++ {
				n := 50 + rng.Intn(400)
				s := &policy.Snapshot{}
				var rr rhoRanks
				xs := make([]nearItem, n)
				for i := range xs {
					s.Jobs = append(s.Jobs, &policy.Job{ID: string(rune('a' + rng.Intn(3)))})
					rr.ents = append(rr.ents, rhoEnt{pos: int32(i), state: int32(rng.Intn(2)), submit: float64(rng.Intn(3))})
					f := uint64(rng.Intn(1+trial%4)) << (coarseRho + uint(rng.Intn(2))*11)
					xs[i] = nearItem{f: f | uint64(rng.Intn(4)), i: int32(i)}
				}
				want := slices.Clone(xs)
				slices.SortFunc(want, func(a, b nearItem) int { return rr.compare(s, &a, &b) })
				if got := rr.sortFull(s, xs); !slices.Equal(got, want) {
					t.Fatalf("w=%d trial %d: the split full sort differs from a comparison sort", w, trial)
				}
			}
		})
	}
}
