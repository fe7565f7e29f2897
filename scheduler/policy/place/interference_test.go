package place

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func sharedGPU() policy.Cluster {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 1})
	busy := &policy.Job{ID: "busy", Workers: 1, Fraction: 0.5, Util: 0.7}
	pt.Run(&cl, busy, policy.Placement{Slots: []policy.Slot{{Node: "r0n0", GPU: 0, Fraction: 0.5, MemMiB: 1000}}})
	return cl
}

func TestInterferenceRefusesAboveThreshold(t *testing.T) {
	pl := NewInterference(InterferenceConfig{})
	hot := &policy.Job{ID: "hot", Workers: 1, Fraction: 0.5, MemMiB: 1000, Util: 0.5}
	cl := sharedGPU()
	c := policy.NewCapacity(&cl)
	d, _ := policy.DemandOf(hot)
	if _, why := pl.Place(hot, d, c); why == "" {
		t.Fatal("0.7 + 0.5 > 1.0 must not share the GPU")
	}
	cool := &policy.Job{ID: "cool", Workers: 1, Fraction: 0.5, MemMiB: 1000, Util: 0.3}
	if p := placeOn(t, pl, c, cool); p.Slots[0].GPU != 0 {
		t.Fatalf("0.7 + 0.3 ≤ 1.0 may share: %+v", p)
	}
	if got := c.Nodes[0].GPUs[0].Util; math.Abs(got-1.0) > 1e-9 {
		t.Errorf("GPU util after commit %g, want 1.0", got)
	}
	if _, why := NewConsolidated().Place(hot, d, policy.NewCapacity(&cl)); why != "" {
		t.Fatalf("premise: consolidated co-locates blindly, got %q", why)
	}
}

func TestInterferencePrefersBusyGPUUnderThreshold(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 3})
	for g, u := range []float64{0, 0.6, 0.3} {
		if u > 0 {
			cl.Nodes[0].GPUs[g].UsedFraction, cl.Nodes[0].GPUs[g].Util = 0.25, u
		}
	}
	j := &policy.Job{ID: "j", Workers: 1, Fraction: 0.25, Util: 0.3}
	p := placeOn(t, NewInterference(InterferenceConfig{}), policy.NewCapacity(&cl), j)
	if p.Slots[0].GPU != 1 {
		t.Fatalf("0.6+0.3 is the busiest GPU still ≤ 1: want GPU 1, got %d", p.Slots[0].GPU)
	}
}

func TestUtilPredictorLearnsOnline(t *testing.T) {
	u := NewUtilPredictor(DefaultUtilPrior, 5)
	truth := func(f policy.ModelFeatures) float64 {
		x := featuresOf(f)
		return 0.2 + 0.05*x[1] + 0.08*x[2] + 0.02*x[3]
	}
	probe := policy.ModelFeatures{ParamsM: 25, GFLOPsPerSamp: 12, BatchSize: 32}
	before := math.Abs(u.Predict(probe) - truth(probe))
	for i := 0; i < 200; i++ {
		f := policy.ModelFeatures{ParamsM: float64(1 + i%50*7), GFLOPsPerSamp: float64(i%13) + 0.5, BatchSize: float64(int(8) << (i % 5))}
		u.Observe(f, truth(f))
	}
	after := math.Abs(u.Predict(probe) - truth(probe))
	if after > 0.01 || after >= before {
		t.Fatalf("error before %g, after 200 observations %g", before, after)
	}
	u.Observe(probe, 7) // out of range: ignored
	if u.Observations() != 200 {
		t.Errorf("observations %d", u.Observations())
	}
}

func TestInterferenceObservesRunningJobs(t *testing.T) {
	pl := NewInterference(InterferenceConfig{})
	f := policy.ModelFeatures{ParamsM: 100, GFLOPsPerSamp: 50, BatchSize: 64}
	before := pl.PredictUtil(&policy.Job{Features: f})
	for i := 0; i < 30; i++ {
		j := &policy.Job{ID: string(rune('a' + i)), State: policy.Running, Util: 0.2, Features: f}
		pl.ObserveSnapshot(&policy.Snapshot{Jobs: []*policy.Job{j}})
		pl.ObserveSnapshot(&policy.Snapshot{Jobs: []*policy.Job{j}}) // seen once only
	}
	after := pl.PredictUtil(&policy.Job{Features: f})
	if pl.Predictor().Observations() != 30 || math.Abs(after-0.2) > 0.05 || math.Abs(before-0.2) < 0.1 {
		t.Fatalf("prediction %g → %g after %d observations of 0.2", before, after, pl.Predictor().Observations())
	}
}
