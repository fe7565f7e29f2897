package colocate

import (
	"math"

	"testing"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// synthetic samples: five models whose log slowdown grows with the product
// of both jobs' compute per step: structure the features can express.
func synthetic() []Sample {
	graphs := []profile.ModelGraph{
		{ParamsM: 11, GFLOPs: 1.1, ActMB: 2.3, ConvFrac: 1, Layers: 21},
		{ParamsM: 25, GFLOPs: 8.2, ActMB: 42, ConvFrac: 1, Layers: 54},
		{ParamsM: 57, GFLOPs: 1.6, ActMB: 3.6, MatmulFrac: 1, Layers: 25},
		{ParamsM: 14, GFLOPs: 0.5, ActMB: 4.5, MatmulFrac: 0.9, RNNFrac: 0.1, Layers: 2},
		{ParamsM: 8, GFLOPs: 0.02, ActMB: 0.08, MatmulFrac: 1, Layers: 2},
	}
	names := []string{"a", "b", "c", "d", "e"}
	var out []Sample
	for i, ga := range graphs {
		for j, gb := range graphs {
			for _, batch := range []int{16, 32, 64, 128} {
				a := Job{Model: names[i], Batch: batch, Graph: ga}
				b := Job{Model: names[j], Batch: 32, Graph: gb}
				ca, _, _ := a.perStep()
				cb, _, _ := b.perStep()
				out = append(out, Sample{Job: a, Partner: b, Slowdown: math.Exp(0.02 * ca * cb)})
			}
		}
	}
	return out
}

// A pair's prediction never depends on the measurements of its own models:
// scrambling model "a"'s slowdowns leaves every prediction involving "a"
// unchanged.
func TestHeldOutNeverSeesItsOwnPairs(t *testing.T) {
	s := synthetic()
	h1, err := NewHeldOut(s)
	if err != nil {
		t.Fatal(err)
	}
	scrambled := append([]Sample(nil), s...)
	for i := range scrambled {
		if scrambled[i].Job.Model == "a" || scrambled[i].Partner.Model == "a" {
			scrambled[i].Slowdown = 9 + float64(i%7)
		}
	}
	h2, err := NewHeldOut(scrambled)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range s {
		if x.Job.Model != "a" && x.Partner.Model != "a" {
			continue
		}
		if p1, p2 := h1.Slowdown(x.Job, x.Partner), h2.Slowdown(x.Job, x.Partner); p1 != p2 {
			t.Fatalf("%s beside %s: %v vs %v after scrambling its own model's pairs", x.Job.Model, x.Partner.Model, p1, p2)
		}
	}
	if got := h1.Slowdown(Job{Model: "zz"}, Job{Model: "a"}); got <= 1e300 {
		t.Fatalf("an unknown model pair predicted %v, want +Inf (never co-located)", got)
	}
}

// Fits are deterministic, and on structure the features can express the
// held-out error is small.
func TestPredictorDeterministicAndAccurate(t *testing.T) {
	s := synthetic()
	a, _ := FitCV(s)
	b, _ := FitCV(s)
	for _, x := range s {
		if a.Slowdown(x.Job, x.Partner) != b.Slowdown(x.Job, x.Partner) {
			t.Fatal("two fits on the same samples differ")
		}
	}
	ev := EvaluateLOMO(s, 1.25, DefaultBeta())
	if ev.Horus.MedianRel > 0.05 {
		t.Fatalf("held-out median error %.3f on noise-free structure, want ≤ 5%%", ev.Horus.MedianRel)
	}
}

// Holding out types, a pair's prediction never depends on the
// measurements of either job type, though it sees the same models at other
// batch sizes.
func TestHeldOutTypesNeverSeesItsOwnTypes(t *testing.T) {
	s := synthetic()
	own := func(j Job) bool { return j.Model == "b" && j.Batch == 64 }
	h1, err := NewHeldOutTypes(s, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scrambled := append([]Sample(nil), s...)
	for i := range scrambled {
		if own(scrambled[i].Job) || own(scrambled[i].Partner) {
			scrambled[i].Slowdown = 9 + float64(i%7)
		}
	}
	h2, _ := NewHeldOutTypes(scrambled, FitOptions{})
	checked := 0
	for _, x := range s {
		if own(x.Job) || own(x.Partner) {
			checked++
			if p1, p2 := h1.Slowdown(x.Job, x.Partner), h2.Slowdown(x.Job, x.Partner); p1 != p2 {
				t.Fatalf("%v beside %v: %v vs %v after scrambling its own type's pairs", x.Job, x.Partner, p1, p2)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no sample of the scrambled type")
	}
}
