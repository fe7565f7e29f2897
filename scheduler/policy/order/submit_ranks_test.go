package order

import (
	"math"
	"math/rand"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// submitChurn is a tracked snapshot that changes between FIFO's calls
// in every way a caller may change one: jobs arrive, change state or
// Submit, finish, vanish (nil), move; the list grows and shrinks; some
// stamps are 0 (untracked jobs). Submits and IDs come from small sets so
// that ties, -0/+0 and infinities are common.
type submitChurn struct {
	rng   *rand.Rand
	s     *policy.Snapshot
	stamp uint64
	nan   bool // NaN Submits allowed
}

var churnSubmits = []float64{0, math.Copysign(0, -1), 1, 2, 2.5, 1e9, math.Inf(1), math.Inf(-1), -3}

func (c *submitChurn) job() *policy.Job {
	if c.rng.Intn(20) == 0 {
		return nil
	}
	sub := churnSubmits[c.rng.Intn(len(churnSubmits))]
	if c.rng.Intn(3) == 0 {
		sub = float64(c.rng.Intn(1000)) / 7
	}
	if c.nan && c.rng.Intn(15) == 0 {
		sub = math.NaN()
	}
	return &policy.Job{ID: string(rune('a' + c.rng.Intn(6))), Submit: sub,
		State: policy.JobState(c.rng.Intn(3)), Workers: 1, Fraction: 1}
}

// set puts j at position i with a fresh stamp (0 now and then).
func (c *submitChurn) set(i int, j *policy.Job) {
	c.s.Jobs[i] = j
	c.stamp++
	c.s.JobGen[i] = c.stamp
	if c.rng.Intn(25) == 0 {
		c.s.JobGen[i] = 0
	}
}

func (c *submitChurn) step() {
	s := c.s
	switch c.rng.Intn(12) {
	case 0: // shrink
		n := c.rng.Intn(len(s.Jobs) + 1)
		s.Jobs, s.JobGen = s.Jobs[:n], s.JobGen[:n]
	case 1: // a job moves to another position (a change at both)
		if n := len(s.Jobs); n > 1 {
			a, b := c.rng.Intn(n), c.rng.Intn(n)
			ja, jb := s.Jobs[a], s.Jobs[b]
			c.set(a, jb)
			c.set(b, ja)
		}
	}
	for range c.rng.Intn(4) { // arrivals
		s.Jobs, s.JobGen = append(s.Jobs, nil), append(s.JobGen, 0)
		c.set(len(s.Jobs)-1, c.job())
	}
	for range c.rng.Intn(4) { // changes in place: a fresh Job, as a caller may build
		if n := len(s.Jobs); n > 0 {
			i := c.rng.Intn(n)
			if j := s.Jobs[i]; j != nil && c.rng.Intn(2) == 0 {
				k := *j
				k.State = policy.JobState(c.rng.Intn(3))
				c.set(i, &k)
			} else {
				c.set(i, c.job())
			}
		}
	}
	// unchanged jobs may come as new pointers to equal jobs
	for i, j := range s.Jobs {
		if j != nil && c.rng.Intn(10) == 0 {
			k := *j
			s.Jobs[i] = &k
		}
	}
}

// fifoReference is sortKeyed's FIFO order of s, read in full.
func fifoReference(s *policy.Snapshot) []policy.Ranked {
	var ks []keyed
	for i, j := range s.Jobs {
		if isActive(j) {
			ks = append(ks, keyed{job: j, at: int32(i + 1), k: [3]float64{j.Submit}})
		}
	}
	return sortKeyed(ks)
}

// TestFIFOTrackedRanksByChanges checks FIFO's change-driven ranking of
// tracked snapshots against a full sort on every call of long random
// churns, with the positions it reports (RankIndexes), untracked calls
// and NaN Submits (the general path) in between: the general path too
// matches the full sort, before and after a NaN. Serially and with the
// passes split down to a few jobs a part (changes, mergePar, ranked).
func TestFIFOTrackedRanksByChanges(t *testing.T) {
	fifoTrackedRanksByChanges(t, 200)
	withSplit(3, func() { fifoTrackedRanksByChanges(t, 30) }) // a pass split is ~10x slower on tiny lists
}

func fifoTrackedRanksByChanges(t *testing.T, seeds int64) {
	fast := 0
	for seed := int64(1); seed <= seeds; seed++ {
		c := &submitChurn{rng: rand.New(rand.NewSource(seed)), s: &policy.Snapshot{JobGen: []uint64{}}, nan: seed%4 == 0}
		o := NewFIFO(FIFOConfig{})
		for step := 0; step < 150; step++ {
			c.step()
			s := c.s
			gen := s.JobGen
			if c.rng.Intn(30) == 0 {
				s.JobGen = nil // an untracked call between tracked ones
			}
			got := o.Order(s)
			fast += map[bool]int{true: 1}[o.fast]
			if hasNaNSubmit(s) && o.fast {
				t.Fatalf("seed %d step %d: a NaN Submit (bad input) took the change-driven path", seed, step)
			}
			want := fifoReference(s)
			if len(got) != len(want) {
				t.Fatalf("seed %d step %d: %d ranked, want %d", seed, step, len(got), len(want))
			}
			at := o.RankIndexes()
			for r := range want {
				if got[r].Job != want[r].Job || got[r].Queue != 0 {
					t.Fatalf("seed %d step %d (fast %v, tracked %v): rank %d is %v %v, want %v %v", seed, step, o.fast, s.JobGen != nil, r, got[r].Job.ID, got[r].Job.Submit, want[r].Job.ID, want[r].Job.Submit)
				}
				if at != nil && s.Jobs[at[r]-1] != got[r].Job {
					t.Fatalf("seed %d step %d: RankIndexes()[%d] = %d lists another job", seed, step, r, at[r])
				}
			}
			if o.fast && len(at) != len(got) {
				t.Fatalf("seed %d step %d: fast path without RankIndexes", seed, step)
			}
			s.JobGen = gen
			if step%3 == 0 {
				o.Idle() // regrows buffers between calls: no ranking moves
			}
		}
	}
	if fast < int(seeds)*150/2 {
		t.Fatalf("the change-driven path ranked only %d of %d calls", fast, seeds*150)
	}
}

func hasNaNSubmit(s *policy.Snapshot) bool {
	for _, j := range s.Jobs {
		if isActive(j) && math.IsNaN(j.Submit) {
			return true
		}
	}
	return false
}

// TestFIFOTrackedPrevRanks checks the last-rank map the change-driven
// path keeps: a job ranked r now whose stamp did not move was ranked
// prev[r] in the last call, and every moved or new job maps to -1;
// serially and split.
func TestFIFOTrackedPrevRanks(t *testing.T) {
	for _, w := range []int{1, 3} {
		withSplit(w, func() { fifoTrackedPrevRanks(t) })
	}
}

func fifoTrackedPrevRanks(t *testing.T) {
	c := &submitChurn{rng: rand.New(rand.NewSource(9)), s: &policy.Snapshot{JobGen: []uint64{}}}
	o := NewFIFO(FIFOConfig{})
	var lastIDs []*policy.Job
	var lastGen []uint64
	lastPos := map[int32]int{} // position -> last rank
	kept := 0
	for step := 0; step < 300; step++ {
		c.step()
		o.Order(c.s)
		if !o.fast {
			t.Fatalf("step %d: tracked snapshot without NaN took the general path", step)
		}
		at := o.tr.at
		for r, pr := range o.tr.prev {
			p := at[r] - 1
			lr, was := lastPos[p]
			same := was && int(p) < len(lastGen) && c.s.JobGen[p] != 0 && lastGen[p] == c.s.JobGen[p]
			switch {
			case same && int(pr) != lr:
				t.Fatalf("step %d: rank %d was rank %d, prev says %d", step, r, lr, pr)
			case !same && pr != -1:
				t.Fatalf("step %d: rank %d changed, prev says %d", step, r, pr)
			case same:
				kept++
				if a, b := lastIDs[lr], c.s.Jobs[p]; a.ID != b.ID || a.Submit != b.Submit || a.State != b.State {
					t.Fatalf("step %d: an unchanged job differs", step)
				}
			}
		}
		lastPos = map[int32]int{}
		lastIDs = lastIDs[:0]
		for r, p := range at {
			lastPos[p-1] = r
			lastIDs = append(lastIDs, c.s.Jobs[p-1])
		}
		lastGen = append(lastGen[:0], c.s.JobGen...)
	}
	if kept == 0 {
		t.Fatal("no job kept its rank: the check saw nothing")
	}
}
