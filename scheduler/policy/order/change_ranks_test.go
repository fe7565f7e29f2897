package order

import (
	"math/rand"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// serviceChurn is submitChurn with service: running jobs accrue
// (policy.Accrual) or have service written and re-stamped, Now moves by
// uneven steps so 2D-LAS queues are crossed, and oracle durations,
// Submits and queue-join times come from small sets so keys tie.
type serviceChurn struct {
	submitChurn
}

var churnDurations = []float64{0, 100, 3000, 3000, 7200, 20000}

func (c *serviceChurn) job() *policy.Job {
	j := c.submitChurn.job()
	if j == nil {
		return nil
	}
	j.QueuedSince = churnSubmits[c.rng.Intn(len(churnSubmits))]
	j.OracleDuration = churnDurations[c.rng.Intn(len(churnDurations))]
	j.Attained = float64(c.rng.Intn(6)) * 1625
	j.Executed = j.Attained / 2
	if j.State == policy.Running && c.rng.Intn(4) != 0 {
		j.Accrual = policy.Accrual{On: true, Since: c.s.Now - float64(c.rng.Intn(3))*50, GPUs: float64(1 + c.rng.Intn(4))}
	}
	return j
}

func (c *serviceChurn) step() {
	c.s.Now += float64(c.rng.Intn(4)) * 400
	c.submitChurn.step()
	s := c.s
	for range c.rng.Intn(4) { // service written in place, re-stamped
		if n := len(s.Jobs); n > 0 {
			i := c.rng.Intn(n)
			if j := s.Jobs[i]; j != nil && j.State == policy.Running && !j.Accrual.On {
				k := *j
				k.Attained += 700
				k.Executed += 300
				c.set(i, &k)
			}
		}
	}
	for i, j := range s.Jobs { // new arrivals from submitChurn get service too
		if j != nil && j.OracleDuration == 0 && j.QueuedSince == 0 && c.rng.Intn(2) == 0 {
			c.set(i, c.job())
		}
	}
}

// TestChangeRanksMatchSort checks 2D-LAS's and SRTF's change-driven
// rankings of tracked snapshots against a fresh instance's full sort of
// the same snapshot on every call, RankIndexes and PrevRanks with them;
// serially and with the passes split down to a few jobs a part (changes,
// mergePar); and with the moved jobs taken in their last rank order from
// a single one on (sortAdds), where SRTF's must be nearly sorted in some
// calls, both in the order the last call kept (keepMoved) and read from
// the last ranking (keptOff).
func TestChangeRanksMatchSort(t *testing.T) {
	defer func(least, share int, off bool) { nearlyMin, nearlyShare, keptOff = least, share, off }(nearlyMin, nearlyShare, keptOff)
	for _, off := range []bool{false, true} {
		keptOff = off
		for _, least := range []int{nearlyMin, 1} {
			nearlyMin, nearlyShare = least, least<<20
			for _, w := range []int{1, 3} {
				withSplit(w, func() { changeRanksMatchSort(t) })
			}
		}
	}
}

func changeRanksMatchSort(t *testing.T) {
	orderings := map[string]func() rankedOrderer{
		"tiresias-las": func() rankedOrderer {
			l, err := NewLAS(QueueConfig{})
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
		"srtf-oracle": func() rankedOrderer { return NewSRTFOracle() },
	}
	for name, mk := range orderings {
		rc, nearly, keptOrder := rankCheck{t: t, name: name}, 0, 0
		for seed := int64(1); seed <= 120; seed++ {
			c := &serviceChurn{submitChurn{rng: rand.New(rand.NewSource(seed)), s: &policy.Snapshot{JobGen: []uint64{}}, nan: seed%5 == 0}}
			o := mk()
			rc.begin(seed)
			for step := 0; step < 100; step++ {
				c.step()
				prev := rc.check(c, o, func() policy.Orderer { return mk() }, step)
				if hasNaNSubmit(c.s) && prev != nil {
					t.Fatalf("%s seed %d step %d: a NaN Submit ranked by changes", name, seed, step)
				}
				if i, ok := o.(policy.Idler); ok && step%3 == 0 {
					i.Idle() // regrows buffers between calls: no ranking moves
				}
			}
			if so, ok := o.(*SRTFOracle); ok {
				nearly += so.cr.t.nearly
				keptOrder += so.cr.t.kept
			}
		}
		if name == "srtf-oracle" && nearlyMin == 1 && nearly == 0 {
			t.Fatalf("%s: no call found its moved jobs nearly sorted in their last rank order", name)
		}
		if name == "srtf-oracle" && nearlyMin == 1 && (keptOrder == 0) != keptOff {
			t.Fatalf("%s: %d calls took the moved jobs in the kept order (kept order off: %v)", name, keptOrder, keptOff)
		}
		rc.enough(120 * 100)
	}
}

// rankedOrderer is an ordering that says where the jobs of its last
// ranking are listed and where they stood in the one before.
type rankedOrderer interface {
	policy.Orderer
	RankIndexes() []int32
	PrevRanks() ([]int32, uint64)
}

// rankCheck checks an ordering's rankings of a churned tracked snapshot
// (untracked now and then) call by call against a fresh instance's full
// sort, with RankIndexes and PrevRanks, and counts the calls ranked by
// what was kept (fast) and the ranks mapped (kept).
type rankCheck struct {
	t          *testing.T
	name       string
	seed       int64
	fast, kept int
	lastAt     []int32
	lastGen    []uint64
}

// begin starts a new instance's sequence.
func (rc *rankCheck) begin(seed int64) {
	rc.seed, rc.lastAt, rc.lastGen = seed, nil, nil
}

// check ranks c's snapshot with o and checks it; prev is o's last-rank
// map (nil: not ranked by what it kept).
func (rc *rankCheck) check(c *serviceChurn, o rankedOrderer, fresh func() policy.Orderer, step int) (prev []int32) {
	t, s := rc.t, c.s
	t.Helper()
	gen := s.JobGen
	if c.rng.Intn(30) == 0 {
		s.JobGen = nil
	}
	got := o.Order(s)
	prev, _ = o.PrevRanks()
	if prev != nil {
		rc.fast++
	}
	tracked := s.JobGen != nil
	s.JobGen = nil
	want := fresh().Order(s)
	s.JobGen = gen
	if len(got) != len(want) {
		t.Fatalf("%s seed %d step %d: %d ranked, want %d", rc.name, rc.seed, step, len(got), len(want))
	}
	at := o.RankIndexes()
	for r := range want {
		if got[r].Job != want[r].Job || got[r].Queue != want[r].Queue {
			t.Fatalf("%s seed %d step %d (by changes %v, tracked %v): rank %d is %s q%d, want %s q%d",
				rc.name, rc.seed, step, prev != nil, tracked, r, got[r].Job.ID, got[r].Queue, want[r].Job.ID, want[r].Queue)
		}
		if at != nil && s.Jobs[at[r]-1] != got[r].Job {
			t.Fatalf("%s seed %d step %d: RankIndexes()[%d] lists another job", rc.name, rc.seed, step, r)
		}
	}
	if prev != nil {
		rc.kept += checkPrev(t, rc.name, s, at, prev, rc.lastAt, rc.lastGen)
	}
	rc.lastAt, rc.lastGen = append(rc.lastAt[:0], at...), append(rc.lastGen[:0], s.JobGen...)
	if prev == nil {
		rc.lastAt = nil
	}
	return prev
}

// enough fails where fewer than half of calls calls were ranked by what
// was kept, or no rank was mapped: the check saw too little.
func (rc *rankCheck) enough(calls int) {
	if rc.fast < calls/2 || rc.kept == 0 {
		rc.t.Fatalf("%s: ranked by what was kept in %d of %d calls, %d ranks kept: the check saw too little", rc.name, rc.fast, calls, rc.kept)
	}
}

// checkPrev checks a last-rank map: an unchanged job (same stamp, not 0)
// ranked now maps to its last rank, any other to -1. It returns how
// many mapped.
func checkPrev(t *testing.T, name string, s *policy.Snapshot, at, prev, lastAt []int32, lastGen []uint64) int {
	t.Helper()
	lastRank := map[int32]int{}
	for r, p := range lastAt {
		lastRank[p-1] = r
	}
	kept := 0
	for r, pr := range prev {
		p := at[r] - 1
		lr, was := lastRank[p]
		same := was && int(p) < len(lastGen) && s.JobGen[p] != 0 && lastGen[p] == s.JobGen[p]
		switch {
		case same && int(pr) != lr, !same && pr != -1:
			t.Fatalf("%s: rank %d (unchanged %v, last rank %d) maps to %d", name, r, same, lr, pr)
		case same:
			kept++
		}
	}
	return kept
}
