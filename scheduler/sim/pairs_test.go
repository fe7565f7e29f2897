package sim

import (
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// Two half-GPU jobs with measured Gavel types run at their measured
// slowdowns; with one type unknown the documented model applies, and the
// result says which model set how many co-locations.
func TestMeasuredPairsSetColocatedSpeeds(t *testing.T) {
	g, err := profile.LoadGavel(repo.TestData(t, "gavel-throughputs", "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	r18 := profile.GavelType{Model: "ResNet-18", Batch: 32, Scale: 1}
	r50 := profile.GavelType{Model: "ResNet-50", Batch: 64, Scale: 1}
	s18, s50, ok := g.Slowdowns("v100", r18, r50)
	if !ok {
		t.Fatal("excerpt lacks the pair")
	}
	a, b := job("a", 0, 100, 1), job("b", 0, 100, 1)
	a.Fraction, b.Fraction, a.Util, b.Util = 0.5, 0.5, 0.5, 0.5
	a.PairType, b.PairType = r18.String(), r50.String()
	cfg := Config{Check: true, Pairs: NewGavelPairs(g, "v100")}
	r, err := Run(cfg, cluster(t, 1, 1), []Job{a, b}, &testFIFO{})
	if err != nil {
		t.Fatal(err)
	}
	// b (ResNet-50) ends at 100·s50; a has then done 100·s50/s18 of its
	// work and finishes the rest alone.
	endB := 100 * s50
	endA := endB + 100 - endB/s18
	got := jctOf(r)
	if !near(got["b"], endB) || !near(got["a"], endA) {
		t.Fatalf("JCTs %v, want a %.3f b %.3f", got, endA, endB)
	}
	if r.Colocations != (Colocations{Measured: 1}) {
		t.Fatalf("colocations %+v, want one measured", r.Colocations)
	}

	b.PairType = "not measured"
	r, err = Run(cfg, cluster(t, 1, 1), []Job{a, b}, &testFIFO{})
	if err != nil {
		t.Fatal(err)
	}
	if got := jctOf(r); !near(got["a"], 105) || r.Colocations != (Colocations{Modelled: 1}) {
		t.Fatalf("unmeasured pair: JCTs %v, colocations %+v; want the documented model's 105 s", got, r.Colocations)
	}
}
