package order

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// TestGittinsByChanges checks 2D-Gittins' loose calls ranked by changes
// (gittins_changes.go) against an exact instance, call by call, on a
// churned tracked snapshot: jobs arrive, leave, move, are re-stamped
// (0 now and then) and accrue across queue limits; IDs and Submits
// repeat (ties broken by what was kept of each position), NaN Submits
// now and then (left to the general path), an untracked or exact call
// now and then. The queued jobs must rank exactly, the running ones once
// SortRunning sorts them. Samples are learnt between calls, re-placed by
// Prepare (after the snapshot moved on, now and then) or, without one,
// by the next call; each call's map (PrevRanks) must match the stamps
// against the last ranking (checkPrev), composed with a re-rank the call
// made, and each Prepare's must carry every rank. Serially and split.
func TestGittinsByChanges(t *testing.T) {
	for _, w := range []int{1, 3} {
		withSplit(w, func() { gittinsByChanges(t) })
	}
}

// byChangesCounts counts what the check saw: calls ranked by changes,
// ranks kept by the maps, re-ranks by Prepare and within a call.
type byChangesCounts struct {
	fast, kept, prepared, caughtUp int
}

func gittinsByChanges(t *testing.T) {
	var n byChangesCounts
	for seed := int64(1); seed <= 30; seed++ {
		c := &serviceChurn{submitChurn{rng: rand.New(rand.NewSource(seed)), s: &policy.Snapshot{JobGen: []uint64{}}, nan: seed%5 == 0}}
		loose, exact := mustGittins(t), mustGittins(t)
		loose.DeferRunning()
		var lastAt []int32
		var lastGen []uint64
		for step := range 80 {
			c.step()
			s := c.s
			s.SkipReasons = c.rng.Intn(10) != 0
			untracked := c.rng.Intn(20) == 0
			caughtUp := loose.cr.fast && loose.dist.Added() != loose.lastVer
			got, prev, at := orderLoose(c, loose, untracked)
			if loose.cr.fast && caughtUp {
				n.caughtUp++
			}
			checkLoose(t, seed, step, s, loose, exact, got)
			if prev == nil {
				lastAt = nil
			} else {
				n.fast++
				n.kept += checkPrev(t, "tiresias-gittins", s, at, prev, lastAt, lastGen)
				lastAt, lastGen = append(lastAt[:0], at...), append(lastGen[:0], s.JobGen...)
			}
			if c.rng.Intn(2) == 0 {
				continue
			}
			for range 1 + c.rng.Intn(2) {
				v := float64(c.rng.Intn(20)) * 700
				loose.dist.Add(v)
				exact.dist.Add(v)
			}
			switch c.rng.Intn(3) {
			case 0: // the next call catches up
			case 1: // the snapshot moves on first
				c.step()
				fallthrough
			default:
				var byChanges bool
				if lastAt, byChanges = preparedMap(t, loose, lastAt); byChanges {
					n.prepared++
				}
			}
		}
	}
	if n.fast < 30*80/2 || n.kept == 0 || n.prepared == 0 || n.caughtUp == 0 {
		t.Fatalf("saw too little: %+v", n)
	}
}

func mustGittins(t *testing.T) *Gittins {
	t.Helper()
	o, err := NewGittins(GittinsConfig{Prior: spreadPrior()})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// orderLoose ranks c's snapshot with o as the Framework does
// (OrderIndexed: the jobs are found through RankIndexes), untracked if
// asked, and returns the ranking with its jobs, o's map and indexes.
func orderLoose(c *serviceChurn, o *Gittins, untracked bool) (got []policy.Ranked, prev, at []int32) {
	s := c.s
	gen := s.JobGen
	if untracked {
		s.JobGen = nil
	}
	defer func() { s.JobGen = gen }()
	rs, _ := o.OrderIndexed(s)
	at = o.RankIndexes()
	got = slices.Clone(rs)
	for r := range got {
		if got[r].Job == nil {
			got[r].Job = s.Jobs[at[r]-1]
		}
	}
	prev, _ = o.PrevRanks()
	return got, prev, at
}

// checkLoose compares a loose ranking, its running jobs sorted by
// SortRunning, with the exact instance's ranking of the same snapshot.
func checkLoose(t *testing.T, seed int64, step int, s *policy.Snapshot, loose, exact *Gittins, got []policy.Ranked) {
	t.Helper()
	gen := s.JobGen
	s.JobGen = nil
	want := exact.Order(s)
	s.JobGen = gen
	if loose.RunningLoose() {
		var ranks []int
		for r, rk := range got {
			if rk.Job.State == policy.Running {
				ranks = append(ranks, r)
			}
		}
		loose.SortRunning(ranks)
		got = sortedAt(got, ranks)
	}
	if !sameJobs(got, want) {
		t.Fatalf("seed %d step %d (by changes %v, loose %v, reasons %v, tracked %v): ranked\n%v\nexact\n%v", seed, step, loose.cr.fast, loose.RunningLoose(), !s.SkipReasons, s.JobGen != nil, ids(got), ids(want))
	}
}

// preparedMap lets o re-rank what it learnt and checks the map: every
// job of the last ranking (lastAt: its positions), from its old rank to
// its new one, counted as a call. It returns the positions the next
// call's map refers to (nil: none) and whether o re-ranked by changes.
func preparedMap(t *testing.T, o *Gittins, lastAt []int32) ([]int32, bool) {
	t.Helper()
	_, calls := o.PrevRanks()
	byChanges := o.cr.fast
	if !o.Prepare() {
		return lastAt, false
	}
	if !byChanges {
		return nil, false
	}
	prev, now := o.PrevRanks()
	at := o.RankIndexes()
	if now != calls+1 || len(prev) != len(at) || (lastAt != nil && len(prev) != len(lastAt)) {
		t.Fatalf("Prepare's map (%d ranks, call %d after %d) is not of the last ranking (%d ranks)", len(prev), now, calls, len(lastAt))
	}
	seen := make([]bool, len(prev))
	for r, lr := range prev {
		if lr < 0 || int(lr) >= len(prev) || seen[lr] || (lastAt != nil && lastAt[lr] != at[r]) {
			t.Fatalf("Prepare's map sends rank %d to %d, which held another job or another rank's", r, lr)
		}
		seen[lr] = true
	}
	return slices.Clone(at), true
}
