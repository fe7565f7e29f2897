package colocate

import (
	"math"
	"testing"
)

// The threshold is the largest prediction whose accepted set keeps the
// share over the bound within the target, never above the bound.
func TestMarginThreshold(t *testing.T) {
	m := Margin{Bound: 1.5, Target: 0.25}
	// (predicted, measured), hand-checked: up to 1.1 one of three is over
	// (33 %), up to 1.2 one of four (25 %), up to 1.4 two of five.
	pm := [][2]float64{{1.2, 1.3}, {1.0, 1.1}, {1.1, 2.0}, {1.4, 1.9}, {1.05, 1.2}, {1.6, 1.2}}
	if got := m.threshold(pm); got != 1.2 {
		t.Fatalf("threshold = %v, want 1.2", got)
	}
	if got := (Margin{Bound: 1.5, Target: 0.1}).threshold(pm); got != 1.05 {
		t.Fatalf("target 10%%: threshold = %v, want 1.05 (the first two are under)", got)
	}
	bad := [][2]float64{{1.0, 2}, {1.0, 1.1}, {1.2, 3}}
	if got := (Margin{Bound: 1.5, Target: 0.1}).threshold(bad); got != 0 {
		t.Fatalf("nothing safe: threshold = %v, want 0", got)
	}
}

// A margined fit only ever raises predictions, by one factor learned from
// its training models; it is deterministic, and a held-out fit's margin
// never depends on the pairs it predicts.
func TestMarginHeldOut(t *testing.T) {
	s := synthetic()
	opt := FitOptions{Margin: Margin{Bound: 1.25, Target: 0.1}}
	plain, _ := FitCV(s)
	a, err := FitCVWith(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FitCVWith(s, opt)
	if !(a.scale >= 1) || math.IsNaN(a.scale) {
		t.Fatalf("scale %v, want ≥ 1", a.scale)
	}
	for _, x := range s {
		pa, pb, pp := a.Slowdown(x.Job, x.Partner), b.Slowdown(x.Job, x.Partner), plain.Slowdown(x.Job, x.Partner)
		if pa != pb || math.Abs(pa-pp*a.scale) > 1e-9*pa {
			t.Fatalf("margined %v / %v, plain %v × scale %v", pa, pb, pp, a.scale)
		}
	}
	h1, _ := NewHeldOutWith(s, opt)
	scrambled := append([]Sample(nil), s...)
	for i := range scrambled {
		if involves(scrambled[i], "a") {
			scrambled[i].Slowdown = 9 + float64(i%7)
		}
	}
	h2, _ := NewHeldOutWith(scrambled, opt)
	for _, x := range s {
		if involves(x, "a") && h1.Slowdown(x.Job, x.Partner) != h2.Slowdown(x.Job, x.Partner) {
			t.Fatalf("%s beside %s changed after scrambling its own model's pairs", x.Job.Model, x.Partner.Model)
		}
	}
}
