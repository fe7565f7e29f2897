package optimus

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// What Optimus keeps between decisions (cached fits, entries of jobs
// whose JobGen stamp did not move, lazily estimated running jobs, kept
// Waiting texts) never changes a decision: a long-lived instance, tracked
// or not, decides each churned snapshot exactly as a fresh instance does.
func TestKeptStateChangesNoDecision(t *testing.T) { keptStateChangesNoDecision(t, false) }

// The same with the long-lived instances' collect split over three
// workers at every size (the fresh one stays serial): the parallel pass
// decides as the serial one.
func TestKeptStateChangesNoDecisionParallel(t *testing.T) {
	defer func(n int, w func() int) { parMin, parWorkers = n, w }(parMin, parWorkers)
	parWorkers = func() int { return 3 }
	keptStateChangesNoDecision(t, true)
}

// serialIf makes collect serial while f runs, if on.
func serialIf(on bool, f func()) {
	if on {
		defer func(n int) { parMin = n }(parMin)
		parMin = 1 << 30
	}
	f()
}

func keptStateChangesNoDecision(t *testing.T, par bool) {
	if par {
		parMin = 1
	}
	for seed := uint64(1); seed <= 8; seed++ {
		queued := 60 + int(seed*17%100)
		if seed%2 == 0 { // spare GPUs: elastic running jobs grow by their fitted gains
			queued = 3
		}
		sp := pt.RandomSpec{
			Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 3 + int(seed%3), GPUsPerNode: 8},
			Running: 20 + int(seed*11%40), Queued: queued, Busy: []float64{0.5, 0.9, 1}[seed%3],
			FracShare: []float64{0, 0.3}[seed%2], ElasticShare: []float64{0.3, 0.6}[seed/2%2],
		}
		s := pt.Random(seed, sp)
		s.SkipReasons = seed%4 == 3
		c := pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 30 + float64(seed%3)*300, Finish: 0.15, Arrive: 8, Jobs: sp})
		tracked, plain := newOptimus(t), newOptimus(t)
		for round := 0; round < 15; round++ {
			fresh, err := New(Config{}, place.NewConsolidated())
			if err != nil {
				t.Fatal(err)
			}
			gen := s.JobGen
			s.JobGen = nil
			var want policy.Decision
			serialIf(par, func() { want = fresh.Decide(s) })
			untracked := plain.Decide(s)
			s.JobGen = gen
			got := tracked.Decide(s)
			for _, d := range []struct {
				name string
				d    policy.Decision
			}{{"tracked", got}, {"untracked", untracked}} {
				if !reflect.DeepEqual(want, d.d) {
					t.Fatalf("seed %d round %d: the long-lived %s instance decided\n%+v\na fresh one\n%+v", seed, round, d.name, d.d, want)
				}
			}
			c.Step(want)
			noisy(s, seed+uint64(round))
		}
	}
}

// noisy jitters the progress point each running job just took (the churn
// stamped the job changed already), so fits move from round to round.
func noisy(s *policy.Snapshot, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, j := range s.Jobs {
		if n := len(j.Progress); j.State == policy.Running && n > 0 {
			j.Progress[n-1].Loss *= 1 + 0.2*rng.Float64()
		}
	}
}

// A nil job listed where a job was (and back) is skipped, tracked or not.
func TestNilJobListed(t *testing.T) {
	s := pt.Random(3, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 1, NodesPerRack: 2, GPUsPerNode: 4}, Running: 4, Queued: 6})
	o := newOptimus(t)
	s.JobGen = make([]uint64, len(s.Jobs))
	for i := range s.JobGen {
		s.JobGen[i] = uint64(i + 1)
	}
	o.Decide(s)
	j := s.Jobs[2]
	s.Jobs[2], s.JobGen[2] = nil, 100
	if d := o.Decide(s); d.Waiting.Reason(j.ID) != "" {
		t.Fatalf("a job no longer listed waits: %v", d.Waiting)
	}
	s.Jobs[2], s.JobGen[2] = j, 101
	o.Decide(s)
}

// speedCache.of is FitSpeed of the map it is given, whatever it was
// given before: same map, a time changed, a size added or gone.
func TestSpeedCacheIsFitSpeed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c speedCache
	obs := map[int]policy.Seconds{}
	for step := 0; step < 2000; step++ {
		switch rng.IntN(4) {
		case 0:
			obs[1+rng.IntN(8)] = 0.1 + rng.Float64()
		case 1:
			for w := range obs {
				delete(obs, w)
				break
			}
		case 2:
			if len(obs) > 0 {
				for w := range obs {
					obs[w] *= 1 + 1e-15 // the least change
					break
				}
			}
		}
		if got, want := c.of(obs), FitSpeed(obs); got != want {
			t.Fatalf("step %d: cached %+v, FitSpeed %+v of %v", step, got, want, obs)
		}
	}
}

// Queued jobs listed twice under one ID share one cached fit, which is
// refitted from whichever copy reads it: the parallel estimates leave
// those to a serial pass in position order, so a long-lived instance
// split over workers decides as a serial fresh one while the copies'
// progress differs and moves.
func TestSharedFitParallel(t *testing.T) {
	defer func(n int, w func() int) { parMin, parWorkers = n, w }(parMin, parWorkers)
	parWorkers = func() int { return 3 }
	sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 1, NodesPerRack: 2, GPUsPerNode: 8}, Running: 10, Queued: 40, Busy: 0.9}
	s := pt.Random(5, sp)
	var twins []*policy.Job
	for _, j := range s.Jobs {
		if j.State == policy.Queued && len(j.Progress) > 1 && len(twins) < 6 {
			cp := *j
			cp.Progress = append([]policy.ProgressPoint(nil), j.Progress[:len(j.Progress)-1]...)
			twins = append(twins, &cp)
		}
	}
	if len(twins) < 2 {
		t.Fatalf("the snapshot has %d queued jobs with progress to copy", len(twins))
	}
	s.Jobs = append(s.Jobs, twins...)
	long := newOptimus(t)
	for round := range 6 {
		var want policy.Decision
		serialIf(true, func() { want = newOptimus(t).Decide(s) })
		parMin = 1
		if got := long.Decide(s); !reflect.DeepEqual(want, got) {
			t.Fatalf("round %d: the parallel instance decided\n%+v\na serial fresh one\n%+v", round, got, want)
		}
		for i, j := range twins { // the copies take a step, one in two with the last loss of the other
			st := j.Progress[len(j.Progress)-1].Step + 50
			loss := 1/(0.001*st+0.5) + 0.3 + 0.01*float64(i%2)
			j.Progress = append(j.Progress[:len(j.Progress):len(j.Progress)], policy.ProgressPoint{Step: st, Loss: loss})
		}
	}
}

// A tracked snapshot whose running jobs reported progress under their
// old JobGen stamps and new ProgressGen stamps (Snapshot.ProgressGen) is
// decided as a fresh instance decides it: optimus reads those jobs'
// progress again. The progress moves each job's fitted curve (its loss
// halves), which must change some decision, or the test shows nothing.
func TestProgressGenReadsProgress(t *testing.T) {
	moved := 0
	for seed := uint64(1); seed <= 12; seed++ {
		sp := pt.RandomSpec{
			Cluster: pt.ClusterSpec{Racks: 1, NodesPerRack: 3, GPUsPerNode: 8},
			Running: 8 + int(seed%5), Queued: 2, Busy: 0.6, ElasticShare: 0.8,
		}
		s := pt.Random(seed, sp)
		s.JobGen, s.ProgressGen = make([]uint64, len(s.Jobs)), make([]uint64, len(s.Jobs))
		for i := range s.Jobs {
			s.JobGen[i], s.ProgressGen[i] = uint64(i+1), uint64(len(s.Jobs)+i+1)
		}
		tracked := newOptimus(t)
		before := tracked.Decide(s)
		for i, j := range s.Jobs {
			if n := len(j.Progress); j.State == policy.Running && n > 0 && j.TargetLoss > 0 {
				last := j.Progress[n-1]
				j.Progress = append(j.Progress[:n:n], policy.ProgressPoint{Step: last.Step + 1000, Loss: j.TargetLoss + (last.Loss-j.TargetLoss)/20})
				s.ProgressGen[i] += 1000
			}
		}
		want := newOptimus(t).Decide(s)
		if got := tracked.Decide(s); !reflect.DeepEqual(want.Starts, got.Starts) || !reflect.DeepEqual(want.Preempts, got.Preempts) {
			t.Fatalf("seed %d: with progress moved under ProgressGen, the tracked instance started %v, a fresh one %v", seed, got.Starts, want.Starts)
		}
		if !reflect.DeepEqual(before.Starts, want.Starts) {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("the progress changed no decision: the test shows nothing")
	}
	t.Logf("%d of 12 decisions changed with the progress", moved)
}
