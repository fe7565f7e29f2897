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
	fast, kept, nearly := 0, 0, 0
	for seed := int64(1); seed <= 80; seed++ {
		c := &serviceChurn{submitChurn{rng: rand.New(rand.NewSource(seed)), s: &policy.Snapshot{JobGen: []uint64{}}, nan: seed%5 == 0}}
		o, _ := NewFair(FairConfig{})
		var lastAt []int32
		var lastGen []uint64
		for step := 0; step < 100; step++ {
			c.step()
			s := c.s
			if small {
				s.Now = float64(step) * 0.2
			}
			gen := s.JobGen
			if c.rng.Intn(30) == 0 {
				s.JobGen = nil
			}
			got := o.Order(s)
			prev, _ := o.PrevRanks()
			if prev != nil {
				fast++
			}
			s.JobGen = nil
			want := mustFair(t).Order(s)
			s.JobGen = gen
			if len(got) != len(want) {
				t.Fatalf("seed %d step %d: %d ranked, want %d", seed, step, len(got), len(want))
			}
			at := o.RankIndexes()
			for r := range want {
				if got[r] != want[r] {
					t.Fatalf("seed %d step %d (kept %v): rank %d is %s, want %s", seed, step, prev != nil, r, got[r].Job.ID, want[r].Job.ID)
				}
				if at != nil && s.Jobs[at[r]-1] != got[r].Job {
					t.Fatalf("seed %d step %d: RankIndexes()[%d] lists another job", seed, step, r)
				}
			}
			if prev != nil {
				kept += checkPrev(t, "fair", s, at, prev, lastAt, lastGen)
			}
			lastAt, lastGen = append(lastAt[:0], at...), append(lastGen[:0], s.JobGen...)
			if prev == nil {
				lastAt = nil
			}
		}
		nearly += o.rr.nearly
	}
	if fast < 80*100/2 || kept == 0 {
		t.Fatalf("ranked in rank order %d of %d calls, %d ranks kept: the check saw too little", fast, 80*100, kept)
	}
	if small && !nearSortOff && nearly == 0 {
		t.Fatalf("calls 0.2 s apart: no insertion kept within its budget")
	}
	if nearSortOff && nearly != 0 {
		t.Fatalf("near sort off, yet %d calls kept the last order", nearly)
	}
	t.Logf("small steps %v, near sort off %v: %d calls kept, %d near, %d ranks kept", small, nearSortOff, fast, nearly, kept)
}

func mustFair(t *testing.T) *Fair {
	t.Helper()
	o, err := NewFair(FairConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}
