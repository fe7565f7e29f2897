package tune

import (
	"context"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy/fluid"
)

// TestControllerHandsOverCheckpoints: with spec.checkpoint, every run of a
// trial names the same file, and a promoted run is told the budget of the
// rung it resumes (9 × 0, 3 × 20, 1 × 60 for budgets 20/60/180); without
// it, no run gets the hand-over meta.
func TestControllerHandsOverCheckpoints(t *testing.T) {
	f := newFake(1)
	s := liveSpec()
	s.Checkpoint = "/shared/tune"
	ct, err := NewController(context.Background(), f, s, ControllerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	runToEnd(t, ct, 100)
	resumes := map[string]int{}
	files := map[string]map[string]bool{} // trial → checkpoint paths
	for _, j := range f.jobs {
		resumes[j.meta[MetaResumeSteps]]++
		p := j.meta[MetaCheckpoint]
		if !strings.HasPrefix(p, "/shared/tune/digits-") || !strings.HasSuffix(p, "/trial-"+j.meta["trial"]+".pt") {
			t.Fatalf("checkpoint %q for trial %s", p, j.meta["trial"])
		}
		if files[j.meta["trial"]] == nil {
			files[j.meta["trial"]] = map[string]bool{}
		}
		files[j.meta["trial"]][p] = true
	}
	if resumes["0"] != 9 || resumes["20"] != 3 || resumes["60"] != 1 || len(resumes) != 3 {
		t.Fatalf("resume_steps by count: %v", resumes)
	}
	for tr, ps := range files {
		if len(ps) != 1 {
			t.Fatalf("trial %s ran with checkpoints %v", tr, ps)
		}
	}

	plain := newFake(1)
	ct, _ = NewController(context.Background(), plain, liveSpec(), ControllerConfig{})
	runToEnd(t, ct, 100)
	for id, j := range plain.jobs {
		if _, ok := j.meta[MetaCheckpoint]; ok {
			t.Fatalf("%s got checkpoint meta without spec.checkpoint", id)
		}
	}
}

// TestSimulatedResume: resuming a promoted trial's checkpoint trains each
// step once, so against retraining from scratch it runs fewer iterations
// and finishes sooner in every mode, and finds the same best batch size
// (synchronous SH sees equal metrics at equal budgets either way).
func TestSimulatedResume(t *testing.T) {
	for _, w := range loadWorkloads(t)[:2] {
		for _, m := range []fluid.Mode{fluid.WholeGPU, fluid.WaterFill} {
			cfg := SimConfig{GPUs: 4, Algorithm: AlgSHA, Mode: m}
			res, err := Simulate([]*Workload{w}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.FromScratch = true
			scr, err := Simulate([]*Workload{w}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !(res.Iterations < scr.Iterations) || !(res.Makespan < scr.Makespan) {
				t.Errorf("%s %v: resume %.0f it / %.0f s, scratch %.0f it / %.0f s", w.Model, m, res.Iterations, res.Makespan, scr.Iterations, scr.Makespan)
			}
			if res.Best[w.Model] != scr.Best[w.Model] {
				t.Errorf("%s %v: best %v vs %v", w.Model, m, res.Best, scr.Best)
			}
		}
	}
}
