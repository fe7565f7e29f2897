package order

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// A loose 2D-Gittins call (tracked, without reasons) ranks its queued
// jobs exactly, and its running jobs, once SortRunning sorts them, as an
// exact instance does: over rounds whose services move, with samples
// learnt and prepared between them, an exact call (a queue view's) now
// and then, loose calls whose running jobs nothing sorts (their records
// left pending) before an exact one, and jobs listed twice (same ID,
// submit time and service).
func TestGittinsLooseSortsAsExact(t *testing.T) {
	prior := spreadPrior()
	for seed := uint64(1); seed <= 4; seed++ {
		s := pt.Random(seed, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 4, GPUsPerNode: 4},
			Running: 60, Queued: 120, Busy: 0.9})
		for _, j := range s.Jobs[:6] { // a job listed twice ties on every key
			dup := *j
			s.Jobs = append(s.Jobs, &dup)
		}
		s.JobGen = make([]uint64, len(s.Jobs))
		for i := range s.JobGen {
			s.JobGen[i] = uint64(i + 1)
		}
		// rounds 2 and 7 are exact; 1, 5 and 9 sort no running job
		loose, _ := NewGittins(GittinsConfig{Prior: prior})
		loose.DeferRunning()
		exact, _ := NewGittins(GittinsConfig{Prior: prior})
		rng := rand.New(rand.NewPCG(seed, 9))
		looseCalls := 0
		for round := range 12 {
			s.SkipReasons = round%5 != 2 // round 2 and 7: a queue view's exact call
			gen := s.JobGen
			s.JobGen = nil
			want := slices.Clone(exact.Order(s))
			s.JobGen = gen
			got := loose.Order(s)
			if loose.RunningLoose() != s.SkipReasons {
				t.Fatalf("seed %d round %d: loose %v without reasons %v", seed, round, loose.RunningLoose(), s.SkipReasons)
			}
			if loose.RunningLoose() {
				looseCalls++
				var ranks []int
				for r, rk := range got {
					if rk.Job.State == policy.Running {
						ranks = append(ranks, r)
					}
				}
				if round%4 == 1 { // no trial read them: the same jobs, queue by queue
					got = byQueueAndState(got)
					want = byQueueAndState(want)
				} else {
					loose.SortRunning(ranks)
					got = sortedAt(got, ranks)
				}
			}
			if !sameJobs(got, want) {
				t.Fatalf("seed %d round %d: ranked\n%v\nexact\n%v", seed, round, ids(got), ids(want))
			}
			for range 2 {
				v := math.Exp(rng.Float64() * 12)
				exact.dist.Add(v)
				loose.dist.Add(v)
			}
			loose.Prepare()
			s.Now += 20 // running jobs' service moves
		}
		if looseCalls == 0 {
			t.Fatalf("seed %d: no loose call", seed)
		}
	}
}

// sortedAt is rs with the entries at ranks (ascending positions) put in
// the order ranks now lists them.
func sortedAt(rs []policy.Ranked, ranks []int) []policy.Ranked {
	out := slices.Clone(rs)
	pos := slices.Clone(ranks)
	slices.Sort(pos)
	for c, r := range ranks {
		out[pos[c]] = rs[r]
	}
	return out
}

// byQueueAndState is rs with each queue's running jobs in list order
// (a loose ranking's running jobs are exact only as a set).
func byQueueAndState(rs []policy.Ranked) []policy.Ranked {
	out := slices.Clone(rs)
	for lo := 0; lo < len(out); {
		hi := lo + 1
		for hi < len(out) && out[hi].Queue == out[lo].Queue && out[hi].Job.State == out[lo].Job.State {
			hi++
		}
		if out[lo].Job.State == policy.Running {
			slices.SortStableFunc(out[lo:hi], func(a, b policy.Ranked) int { return strings.Compare(a.Job.ID, b.Job.ID) })
		}
		lo = hi
	}
	return out
}

func sameJobs(a, b []policy.Ranked) bool {
	return slices.EqualFunc(a, b, func(x, y policy.Ranked) bool { return x.Job == y.Job && x.Queue == y.Queue })
}
