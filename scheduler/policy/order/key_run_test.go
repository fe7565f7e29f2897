package order

import (
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// 2D-Gittins sorting its never-run jobs apart (keyRun) ranks exactly as
// a fresh 2D-Gittins over the same samples, every round of a tracked
// churn whose distribution learns (so the run's index moves), with
// untracked rounds between, duplicates, pointers that change and
// preempted jobs that rejoin or leave the run; and the run's last order
// is really reused.
func TestGittinsRunSameRanking(t *testing.T) {
	defer func(n int) { runMin = n }(runMin)
	prior := []float64{100, 1000, 5000, 20000}
	for _, min := range []int{1, 64} {
		runMin = min
		reused := 0
		for seed := uint64(1); seed <= 6; seed++ {
			c := newLucidChurn(seed, 11, 150)
			git, _ := NewGittins(GittinsConfig{Prior: prior})
			learned := slices.Clone(prior)
			for round := range 50 {
				gen := c.s.JobGen
				c.s.JobGen = nil
				fresh, _ := NewGittins(GittinsConfig{Prior: learned})
				want := ptrs(fresh.Order(c.s))
				if round%11 != 5 {
					c.s.JobGen = gen
				}
				got := ptrs(git.Order(c.s))
				c.s.JobGen = gen
				if !slices.Equal(got, want) {
					t.Fatalf("runMin %d seed %d round %d: ranked\n%v\na fresh sort\n%v", min, seed, round, got, want)
				}
				c.step(func(j *policy.Job) {
					git.ObserveFinished(j)
					v := j.Attained
					if v <= 0 {
						v = j.Executed * gpuShare(j)
					}
					learned = append(learned, v)
				})
				gittinsService(c)
			}
			if git.sc.run != nil {
				reused += git.sc.run.reused
			}
		}
		if reused == 0 {
			t.Fatalf("runMin %d: no call kept the run's last order", min)
		}
		t.Logf("runMin %d: %d calls kept the run's order", min, reused)
	}
}

// gittinsService gives running jobs of a churn service to rank by, and
// stamps them.
func gittinsService(c *lucidChurn) {
	for _, j := range c.s.Jobs {
		if j.State == policy.Running && c.rng.IntN(2) == 0 {
			j.Attained += float64(30 * j.Workers)
			c.touched[j] = true
		}
	}
	c.restamp()
}

// The listed and by-position sequences of the incremental tests, with
// every full sort of 2D-Gittins splitting its run off.
func TestGittinsRunOverTime(t *testing.T) {
	defer func(n int) { runMin = n }(runMin)
	runMin = 1
	t.Run("listed", TestIncrementalOrderMatchesSortOverTime)
	t.Run("by-position", TestIncrementalByPositionMatchesSort)
}
