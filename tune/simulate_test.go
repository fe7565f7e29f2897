package tune

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy/fluid"
)

const profiles = "../testdata/traces/model-profiles"

func loadWorkloads(t *testing.T) []*Workload {
	t.Helper()
	ws, err := LoadWorkloads(profiles, 4)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestWorkloadsFromProfiles(t *testing.T) {
	ws := loadWorkloads(t)
	if len(ws) != 6 { // gpt_pmp has curves but no step times
		t.Fatalf("%d workloads", len(ws))
	}
	for _, w := range ws {
		if len(w.Batches) < 6 || !(w.Samples > 0) {
			t.Fatalf("%s: batches %v samples %v", w.Model, w.Batches, w.Samples)
		}
		b := w.Batches[0]
		if w.StepTime(b, 1) <= 0 || w.Util(b) <= 0 || w.Util(b) > 1 {
			t.Fatalf("%s: step %v util %v", w.Model, w.StepTime(b, 1), w.Util(b))
		}
	}
}

// TestSimulatedSHA: synchronous successive halving promotes on metrics at
// equal budgets only, so Fluid and the baseline must find the same best
// batch size; Fluid must never be slower, and on 8 GPUs the final rung's
// single trial spreads, so it must be clearly faster.
func TestSimulatedSHA(t *testing.T) {
	for _, w := range loadWorkloads(t) {
		for _, g := range []int{2, 8} {
			base, err := Simulate([]*Workload{w}, SimConfig{GPUs: g, Algorithm: AlgSHA, Mode: fluid.WholeGPU})
			if err != nil {
				t.Fatal(err)
			}
			fl, err := Simulate([]*Workload{w}, SimConfig{GPUs: g, Algorithm: AlgSHA, Mode: fluid.WaterFill})
			if err != nil {
				t.Fatal(err)
			}
			if base.Best[w.Model] != fl.Best[w.Model] {
				t.Errorf("%s on %d GPUs: best %v vs %v", w.Model, g, base.Best, fl.Best)
			}
			if fl.Makespan > base.Makespan*1.01 {
				t.Errorf("%s on %d GPUs: fluid %.0f s slower than one trial per GPU %.0f s", w.Model, g, fl.Makespan, base.Makespan)
			}
			if g == 8 && w.Model == "imagenet" && base.Makespan/fl.Makespan < 2 {
				t.Errorf("imagenet on 8 GPUs: speed-up %.2f", base.Makespan/fl.Makespan)
			}
		}
	}
}

// TestSimulatedASHAFinishes: every algorithm drains on a small cluster,
// with trials packed and spread, and the guard (no over-committed GPU)
// holds throughout.
func TestSimulatedAlgorithmsFinish(t *testing.T) {
	ws := loadWorkloads(t)
	for _, alg := range []string{AlgASHA, AlgHyperband, AlgRandom} {
		for _, m := range []fluid.Mode{fluid.WholeGPU, fluid.FixedFraction, fluid.WaterFill} {
			r, err := Simulate(ws, SimConfig{GPUs: 4, Algorithm: alg, Mode: m, Reduction: 2})
			if err != nil {
				t.Fatalf("%s %s: %v", alg, m, err)
			}
			if len(r.Best) != len(ws) || !(r.Makespan > 0) || !(r.GPUHours > 0) {
				t.Fatalf("%s %s: %+v", alg, m, r)
			}
		}
	}
}

// TestSimulatedBOHBSameBest: BOHB's brackets run in order and its model
// sees only results, so the plan cannot change what it finds.
func TestSimulatedBOHBSameBest(t *testing.T) {
	ws := loadWorkloads(t)
	for _, g := range []int{2, 8} {
		base, err := Simulate(ws, SimConfig{GPUs: g, Algorithm: AlgBOHB, Mode: fluid.WholeGPU})
		if err != nil {
			t.Fatal(err)
		}
		fl, err := Simulate(ws, SimConfig{GPUs: g, Algorithm: AlgBOHB, Mode: fluid.WaterFill})
		if err != nil {
			t.Fatal(err)
		}
		for m, b := range base.Best {
			if fl.Best[m] != b {
				t.Errorf("%s on %d GPUs: best %v vs %v", m, g, b, fl.Best[m])
			}
		}
	}
}
