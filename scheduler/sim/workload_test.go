package sim

import (
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

func traceJobs(n int) []trace.Job {
	out := make([]trace.Job, n)
	for i := range out {
		out[i] = trace.Job{ID: string(rune('a' + i)), Submit: float64(i), Duration: 1000, GPUs: 2, Fraction: 1, Source: "t"}
	}
	return out
}

func TestModelAssignmentIsSeeded(t *testing.T) {
	prof := profiles(t)
	models := func(seed uint64) string {
		jobs, err := Build(traceJobs(20), WorkloadOptions{Profiles: prof, AssignModels: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, j := range jobs {
			if j.Speed == nil || j.Model != j.Speed.Name || j.NoSpeedup {
				t.Fatalf("job %s: model %q, speed %v, no-speedup %v", j.ID, j.Model, j.Speed, j.NoSpeedup)
			}
			s += j.Model + ","
		}
		return s
	}
	if a, b := models(1), models(1); a != b {
		t.Fatal("same seed, different models")
	}
	if models(1) == models(2) {
		t.Fatal("different seeds gave identical assignments of 20 jobs")
	}
	if _, err := Build(traceJobs(1), WorkloadOptions{AssignModels: true}); err == nil {
		t.Fatal("assigning models without profiles accepted")
	}
	bad := traceJobs(1)
	bad[0].Fraction = 1.5
	if _, err := Build(bad, WorkloadOptions{}); err == nil {
		t.Fatal("fraction 1.5 accepted")
	}
}

// A profiled job reports convergence points as it runs, with growing steps.
func TestProgressPointsFollowCurve(t *testing.T) {
	prof := profiles(t)
	jobs, err := Build(traceJobs(1), WorkloadOptions{Profiles: prof, AssignModels: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	spy := &progressSpy{}
	if _, err := Run(Config{Check: true, Quantum: 50, IdleQuanta: true}, cluster(t, 1, 2), jobs, spy); err != nil {
		t.Fatal(err)
	}
	if spy.points < 10 || !spy.increasing {
		t.Fatalf("saw %d progress points (increasing=%v), want ≥ 10 rising", spy.points, spy.increasing)
	}
}

// progressSpy is test-fifo that records the progress a running job reports.
type progressSpy struct {
	testFIFO
	points     int
	increasing bool
}

func (p *progressSpy) Decide(s *policySnapshot) policyDecision {
	for _, j := range s.Jobs {
		if n := len(j.Progress); n > 0 {
			p.points = n
			p.increasing = true
			for i := 1; i < n; i++ {
				if j.Progress[i].Step <= j.Progress[i-1].Step {
					p.increasing = false
				}
			}
		}
	}
	return p.testFIFO.Decide(s)
}

// TestBatchSubmitsAtZero: --batch keeps the jobs and their work but
// submits them all at once, and leaves the trace's own stats.
func TestBatchSubmitsAtZero(t *testing.T) {
	tr := "tiresias:" + repo.TestData(t, "tiresias", "60_job.csv")
	plain, st, err := Spec{Trace: tr, GPUs: 8}.Load()
	if err != nil {
		t.Fatal(err)
	}
	batch, bst, err := Spec{Trace: tr, GPUs: 8, Batch: true}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Jobs) != len(plain.Jobs) || bst != st {
		t.Fatalf("batch changed the job set or stats: %d vs %d jobs, %+v vs %+v", len(batch.Jobs), len(plain.Jobs), bst, st)
	}
	late := 0
	for i, j := range batch.Jobs {
		if j.Submit != 0 || j.Work != plain.Jobs[i].Work {
			t.Fatalf("job %s: submit %v work %v (plain work %v)", j.ID, j.Submit, j.Work, plain.Jobs[i].Work)
		}
		if plain.Jobs[i].Submit > 0 {
			late++
		}
	}
	if late == 0 {
		t.Fatal("the plain trace should have later submissions")
	}
}
