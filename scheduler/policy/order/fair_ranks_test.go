package order

import (
	"math/rand"
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
// or by up to 1,200 s; and with the near sort off, every call sorts in
// full (sortFull, as where the insertion runs out of moves).
func TestRhoRanksMatchSort(t *testing.T) {
	defer func() { nearSortOff = false }()
	for _, w := range []int{1, 3} {
		withSplit(w, func() {
			for _, small := range []bool{true, false} {
				for _, off := range []bool{false, true} {
					nearSortOff = off
					rhoRanksMatchSort(t, small)
				}
			}
		})
	}
}

func rhoRanksMatchSort(t *testing.T, small bool) {
	rc, nearly := rankCheck{t: t, name: "fair"}, 0
	for seed := int64(1); seed <= 80; seed++ {
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
	rc.enough(80 * 100)
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
