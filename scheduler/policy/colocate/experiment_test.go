package colocate

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

func excerpt(t *testing.T) (*profile.Gavel, map[string]profile.ModelGraph) {
	t.Helper()
	g, err := profile.LoadGavel(repo.TestData(t, "gavel-throughputs", "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	graphs, err := profile.GavelGraphs()
	if err != nil {
		t.Fatal(err)
	}
	return g, graphs
}

// Two 100 s jobs at t=0 on one GPU, by hand. ResNet-18 (b32) runs 1.989×
// slower beside ResNet-50 (b64), which runs 1.186× slower (the excerpt's
// measurements). Exclusive: 100 and 200 s. Naive co-location: ResNet-50
// ends at 118.63 s; ResNet-18 has done 118.63/1.989 = 59.64 s of work and
// ends 40.36 s later, at 158.99 s.
func TestExperimentByHand(t *testing.T) {
	g, graphs := excerpt(t)
	r18 := profile.GavelType{Model: "ResNet-18", Batch: 32, Scale: 1}
	r50 := profile.GavelType{Model: "ResNet-50", Batch: 64, Scale: 1}
	j18, _ := GavelJob(r18, graphs)
	j50, _ := GavelJob(r50, graphs)
	jobs := []ExperimentJob{{Type: r18, Job: j18, Duration: 100}, {Type: r50, Job: j50, Duration: 100}}
	x := Experiment{Gavel: g, GPU: "v100", GPUs: 1, Bound: 1.25}
	s18, s50, _ := g.Slowdowns("v100", r18, r50)
	end50 := 100 * s50
	end18 := end50 + (100 - end50/s18)

	ex, _ := x.Run(jobs, Exclusive)
	if ex.Makespan != 200 || ex.AvgJCT != 150 || ex.Colocations != 0 {
		t.Fatalf("exclusive %+v", ex)
	}
	nv, _ := x.Run(jobs, Naive)
	if math.Abs(nv.Makespan-end18) > 1e-9 || math.Abs(nv.AvgJCT-(end18+end50)/2) > 1e-9 || nv.Colocations != 1 || nv.OverBound != 1 {
		t.Fatalf("naive %+v, want makespan %.2f", nv, end18)
	}
	if math.Abs(end18-158.99) > 0.01 {
		t.Fatalf("hand computation drifted: %.3f", end18)
	}
	// The pair breaks the 1.25 bound (1.989), so the oracle keeps them apart.
	or, _ := x.Run(jobs, Oracle)
	if or.Makespan != 200 || or.Colocations != 0 {
		t.Fatalf("oracle %+v", or)
	}
	if _, err := x.Run(jobs, Predicted); err == nil {
		t.Fatal("predicted rule without a predictor accepted")
	}
}

// On a random workload the bounded rules never co-locate above the bound
// (oracle, by construction) and every job finishes exactly once.
func TestExperimentInvariants(t *testing.T) {
	g, graphs := excerpt(t)
	durations := []float64{60, 300, 1200, 3600}
	jobs, err := Workload(g, "v100", graphs, durations, 200, 2, 0.9, 7)
	if err != nil {
		t.Fatal(err)
	}
	x := Experiment{Gavel: g, GPU: "v100", GPUs: 2, Bound: 1.25}
	for _, rule := range []Rule{Exclusive, Naive, Oracle} {
		o, err := x.Run(jobs, rule)
		if err != nil {
			t.Fatal(err)
		}
		if rule == Oracle && o.OverBound != 0 {
			t.Fatalf("oracle co-located %d pairs over the bound", o.OverBound)
		}
		if rule == Exclusive && (o.Colocations != 0 || o.WorstSlowdown != 1) {
			t.Fatalf("exclusive %+v", o)
		}
		if !(o.AvgJCT > 0) || o.Makespan < jobs[len(jobs)-1].Submit {
			t.Fatalf("%s: %+v", rule, o)
		}
	}
}

// BestPartner: ResNet-18 arriving when ResNet-50 and LM each hold a GPU
// may join either at bound 2.0 (measured 1.99 / 1.19 beside ResNet-50,
// 1.00 / 1.26 beside LM). First-fit joins ResNet-50 (GPU 0); the greedy
// joins LM, the pair with more combined speed (1.79 vs 1.35).
func TestExperimentBestPartner(t *testing.T) {
	g, graphs := excerpt(t)
	var jobs []ExperimentJob
	for _, ty := range []profile.GavelType{{Model: "ResNet-50", Batch: 64, Scale: 1}, {Model: "LM", Batch: 20, Scale: 1}, {Model: "ResNet-18", Batch: 32, Scale: 1}} {
		j, err := GavelJob(ty, graphs)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, ExperimentJob{Type: ty, Job: j, Duration: 1000})
	}
	jobs[2].Submit, jobs[2].Duration = 1, 100
	x := Experiment{Gavel: g, GPU: "v100", GPUs: 2, Bound: 2.0}
	first, _ := x.Run(jobs, Oracle)
	x.BestPartner = true
	best, _ := x.Run(jobs, Oracle)
	if first.Colocations != 1 || best.Colocations != 1 {
		t.Fatalf("co-locations %d, %d; want 1 each", first.Colocations, best.Colocations)
	}
	if math.Abs(first.WorstSlowdown-1.989) > 0.01 || math.Abs(best.WorstSlowdown-1.261) > 0.01 {
		t.Fatalf("worst slowdowns first-fit %.3f, best %.3f; want 1.989 and 1.261", first.WorstSlowdown, best.WorstSlowdown)
	}
}

// acceptAll predicts no slowdown for any pair.
type acceptAll struct{}

func (acceptAll) Slowdown(Job, Job) float64 { return 1 }

// With Learn, a pair of types breaks the bound at most once in a run: the
// first time it shares, its measurement is seen and rules from then on.
func TestExperimentLearnsFromSharedPairs(t *testing.T) {
	g, graphs := excerpt(t)
	jobs, err := Workload(g, "v100", graphs, []float64{600, 1800, 3600}, 200, 4, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		jobs[i].Submit = 0
	}
	x := Experiment{Gavel: g, GPU: "v100", GPUs: 4, Bound: 1.25, Predictor: acceptAll{}}
	plain, _ := x.Run(jobs, Predicted)
	x.Learn = true
	learn, _ := x.Run(jobs, Predicted)
	over := 0 // unordered type pairs whose measurement breaks the bound
	types := g.Types("v100")
	for i, a := range types {
		for _, b := range types[i:] {
			if sa, sb, ok := g.Slowdowns("v100", a, b); ok && a.Scale == 1 && b.Scale == 1 && math.Max(sa, sb) > 1.25 {
				over++
			}
		}
	}
	t.Logf("learn %d/%d over, plain %d/%d, type pairs over %d", learn.OverBound, learn.Colocations, plain.OverBound, plain.Colocations, over)
	if learn.OverBound > over || learn.OverBound >= plain.OverBound || learn.Colocations == 0 {
		t.Fatalf("learn: %d of %d co-locations over the bound (%d type pairs could be); without: %d",
			learn.OverBound, learn.Colocations, over, plain.OverBound)
	}
}
