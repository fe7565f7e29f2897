package sim

import (
	"fmt"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/policy/colocate"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/caravan-dl/caravan/scheduler/profile"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// gavelRun plays 60 single-GPU jobs of the excerpt's four V100 types on 4
// GPUs under one co-location rule at bound 1.5, checking the engine's
// invariants after every event.
func gavelRun(t *testing.T, rule colocate.Rule) *Result {
	t.Helper()
	g, err := profile.LoadGavel(repo.TestData(t, "gavel-throughputs", "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj []trace.Job
	for i := 0; i < 62; i++ {
		j := trace.Job{ID: fmt.Sprintf("j%02d", i), Submit: float64(i * 40), Duration: float64(300 + 97*(i%11)), GPUs: 1, Fraction: 1}
		if i%31 == 30 {
			j.GPUs = 2 // not a Gavel single-GPU job: dropped
		}
		tj = append(tj, j)
	}
	built, err := Build(tj, WorkloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, dropped, err := AssignGavel(built, GavelOptions{Types: g.Types("v100"), Seed: 3})
	if err != nil || dropped != 2 || len(jobs) != 60 {
		t.Fatalf("assign: %d jobs, %d dropped, %v", len(jobs), dropped, err)
	}
	cfg := registry.Config{}
	cfg.Interference.Pairs = &colocate.PlacementPairs{Rule: rule, Gavel: g, GPU: "v100"}
	p, err := registry.New("fifo+interference-bounded", cfg)
	if err != nil {
		t.Fatal(err)
	}
	pairs := NewGavelPairs(g, "v100")
	pairs.Limit = 1.5
	cl, err := Homogeneous(1, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(Config{Pairs: pairs, Check: true}, cl, jobs, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Metrics.Jobs != 60 {
		t.Fatalf("%s: %d jobs finished", rule, r.Metrics.Jobs)
	}
	return r
}

// The oracle co-locates only measured pairs within the bound (none over
// it); naive packing also takes pairs that break it; exclusive shares
// nothing. Every co-located pair here has measured types.
func TestGavelWorkloadRules(t *testing.T) {
	ex := gavelRun(t, colocate.Exclusive)
	if ex.Colocations != (Colocations{}) {
		t.Fatalf("exclusive co-located: %+v", ex.Colocations)
	}
	or := gavelRun(t, colocate.Oracle)
	if or.Colocations.Measured == 0 || or.Colocations.OverBound != 0 || or.Colocations.Modelled != 0 {
		t.Fatalf("oracle: %+v", or.Colocations)
	}
	nv := gavelRun(t, colocate.Naive)
	if nv.Colocations.OverBound == 0 || nv.Colocations.Modelled != 0 {
		t.Fatalf("naive: %+v", nv.Colocations)
	}
	t.Logf("makespan exclusive %.0f, oracle %.0f, naive %.0f", ex.Metrics.Makespan, or.Metrics.Makespan, nv.Metrics.Makespan)
}

func TestAssignGavelErrors(t *testing.T) {
	if _, _, err := AssignGavel([]Job{{}}, GavelOptions{}); err == nil {
		t.Error("no types accepted")
	}
	types := []profile.GavelType{{Model: "LM", Batch: 20, Scale: 1}}
	if _, _, err := AssignGavel([]Job{{}}, GavelOptions{Types: types, Fraction: 1.5}); err == nil {
		t.Error("fraction 1.5 accepted")
	}
	multi := Job{Job: trace.Job{GPUs: 4, Fraction: 1}}
	if _, _, err := AssignGavel([]Job{multi}, GavelOptions{Types: types}); err == nil {
		t.Error("a trace without single-GPU jobs accepted")
	}
}
