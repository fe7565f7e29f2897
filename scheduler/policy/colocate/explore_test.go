package colocate

import (
	"math"
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// One GPU, by hand: ResNet-50 (b64, 1000 s) holds it; ResNet-18 (b32,
// 100 s) probes beside it (acceptAll predicts 1.0). After the 100 s window
// the measurement (ResNet-18 1.989×, over the 1.25 bound) evicts the
// newcomer: it lost its 100/1.989 s of progress and repeats 10 s of
// restart work, waiting for the GPU. ResNet-50 ran 1.186× slower for the
// window: it ends at 100 + (1000 − 100/1.186), ResNet-18 110 s later.
func TestExploreByHand(t *testing.T) {
	g, graphs := excerpt(t)
	r18 := profile.GavelType{Model: "ResNet-18", Batch: 32, Scale: 1}
	r50 := profile.GavelType{Model: "ResNet-50", Batch: 64, Scale: 1}
	j18, _ := GavelJob(r18, graphs)
	j50, _ := GavelJob(r50, graphs)
	jobs := []ExperimentJob{{Type: r50, Job: j50, Duration: 1000}, {Type: r18, Job: j18, Duration: 100}}
	x := Experiment{Gavel: g, GPU: "v100", GPUs: 1, Bound: 1.25, Predictor: acceptAll{},
		Explore: &Explore{Window: 100, Restart: 10, Factor: 1.5}}
	o, err := x.Run(jobs, Predicted)
	if err != nil {
		t.Fatal(err)
	}
	_, s50, _ := g.Slowdowns("v100", r18, r50)
	end50 := 100 + (1000 - 100/s50)
	if math.Abs(o.Makespan-(end50+110)) > 1e-6 || math.Abs(o.AvgJCT-(2*end50+110)/2) > 1e-6 {
		t.Fatalf("makespan %.3f, JCT %.3f; want %.3f, %.3f", o.Makespan, o.AvgJCT, end50+110, (2*end50+110)/2)
	}
	if o.Probes != 1 || o.ProbesOver != 1 || o.Evictions != 1 || o.SustainedOver() != 0 ||
		math.Abs(o.ProbeOverSeconds-100) > 1e-9 || o.SustainedOverSeconds != 0 {
		t.Fatalf("outcome %+v", o)
	}
	// Without exploring, the same prediction keeps the pair together.
	x.Explore = nil
	if o, _ := x.Run(jobs, Predicted); o.SustainedOver() != 1 || !(o.SustainedOverSeconds > 100) {
		t.Fatalf("predicted alone %+v", o)
	}
	x.Explore = &Explore{Window: 0, Factor: 1}
	if _, err := x.Run(jobs, Predicted); err == nil {
		t.Fatal("explore window 0 accepted")
	}
}

// exploreRun plays a random workload with Explore under a permissive
// predictor (every pair worth a probe), checking after every event that
// no pair over the bound shares a GPU past its probe window.
func exploreRun(t *testing.T, seed int64, batch bool) (*run, Outcome) {
	t.Helper()
	g, graphs := excerpt(t)
	jobs, err := Workload(g, "v100", graphs, []float64{120, 600, 1800, 3600}, 150, 4, 1.1, seed)
	if err != nil {
		t.Fatal(err)
	}
	if batch {
		for i := range jobs {
			jobs[i].Submit = 0
		}
	}
	ex := DefaultExplore()
	ex.Window = 200
	x := Experiment{Gavel: g, GPU: "v100", GPUs: 4, Bound: 1.25, Predictor: acceptAll{}, Explore: &ex}
	s := newRun(x, Predicted, jobs)
	s.check = func(s *run) {
		for gpu, on := range s.onGPU {
			if len(on) != 2 {
				continue
			}
			sa, sb, _ := g.Slowdowns("v100", on[0].job.Type, on[1].job.Type)
			if math.Max(sa, sb) <= 1.25 {
				continue
			}
			if c := on[0].co; c == nil || !c.probe || s.now > c.end+1e-9 {
				t.Fatalf("seed %d t=%.1f GPU %d: %s and %s (%.2f×) share past any probe window", seed, s.now, gpu,
					on[0].job.Type, on[1].job.Type, math.Max(sa, sb))
			}
		}
	}
	s.play()
	if len(s.done) != len(jobs) || len(s.queue) != 0 || len(s.ex.probes) != 0 {
		t.Fatalf("seed %d: %d of %d jobs done, %d queued, %d probes open", seed, len(s.done), len(jobs), len(s.queue), len(s.ex.probes))
	}
	return s, s.outcome()
}

// The invariant on random runs, batch and with arrivals: an over-bound
// pair shares only within its probe window; every type pair is probed at
// most once; the outcome's own accounting agrees.
func TestExploreSustainedNeverOverBound(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		s, o := exploreRun(t, seed, seed%2 == 0)
		if o.SustainedOver() != 0 || o.SustainedOverSeconds != 0 {
			t.Fatalf("seed %d: %d sustained co-locations over the bound, %.1f s", seed, o.SustainedOver(), o.SustainedOverSeconds)
		}
		if o.ProbesOver == 0 || o.Probes <= o.ProbesOver || o.Evictions > o.ProbesOver {
			t.Fatalf("seed %d: a permissive run should probe bad and good pairs: %+v", seed, o)
		}
		for k, n := range s.ex.tried {
			if n != 1 {
				t.Fatalf("seed %d: type pair %v probed %d times", seed, k, n)
			}
		}
		if len(s.ex.tried) != o.Probes {
			t.Fatalf("seed %d: %d probes over %d type pairs", seed, o.Probes, len(s.ex.tried))
		}
	}
}

// The same workload twice gives the same outcome, to the bit.
func TestExploreDeterministic(t *testing.T) {
	_, a := exploreRun(t, 3, false)
	_, b := exploreRun(t, 3, false)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
}

// The optimistic prior: a pair of models that measured over Bound × Factor
// at one batch size is not probed at others; without such a record the
// predictor's estimate decides.
func TestExploreEstimate(t *testing.T) {
	g, graphs := excerpt(t)
	x := Experiment{Gavel: g, GPU: "v100", GPUs: 4, Bound: 1.5, Predictor: acceptAll{}, Explore: &Explore{Window: 1, Factor: 1.5}}
	e := newExplorer(x, Predicted)
	a := &ExperimentJob{Type: profile.GavelType{Model: "ResNet-18", Batch: 32, Scale: 1}}
	b := &ExperimentJob{Type: profile.GavelType{Model: "ResNet-50", Batch: 64, Scale: 1}}
	a.Job, _ = GavelJob(a.Type, graphs)
	b.Job, _ = GavelJob(b.Type, graphs)
	if v := e.estimate(a, b); v != 1 {
		t.Fatalf("no history: estimate %v, want the predictor's 1", v)
	}
	e.best[pairKey("ResNet-50", "ResNet-18")] = 2.4
	if v := e.estimate(b, a); v != 2.4 {
		t.Fatalf("history: estimate %v, want 2.4", v)
	}
	e.cfg.NoModelPrior = true
	if v := e.estimate(b, a); v != 1 {
		t.Fatalf("history ignored (ablation): estimate %v, want the predictor's 1", v)
	}
	if newExplorer(x, Oracle) != nil || newExplorer(Experiment{}, Predicted) != nil {
		t.Fatal("explorer made for a rule that does not explore")
	}
	if e.cfg.MaxInFlight != 1 {
		t.Fatalf("default in flight %d, want 1 for 4 GPUs", e.cfg.MaxInFlight)
	}
}
