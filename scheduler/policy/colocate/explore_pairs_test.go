package colocate

import (
	"math"
	"testing"
)

// ExplorePairs promises a probe to one pair of jobs per unjudged type
// pair, within the cap; a measured pair answers its measurement; a pair
// of models measured good at one batch size is estimated by it at others.
func TestExplorePairsProbes(t *testing.T) {
	_, graphs := excerpt(t)
	cfg := DefaultExplore()
	cfg.MaxInFlight = 2
	ex, err := NewExplorePairs(PlacementPairs{Graphs: graphs, Predictor: fixed(2.0)}, 1.5, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lm, r50, r50b, tr := gavelJob("a", "LM", 20), gavelJob("b", "ResNet-50", 64), gavelJob("c", "ResNet-50", 64), gavelJob("d", "Transformer", 64)
	// 2.0 ≤ 1.5 × 1.5: a probe, reported at the bound.
	if s, ok := ex.Slowdown(lm, r50); !ok || s != 1.5 {
		t.Fatalf("unjudged pair: %v %v, want a probe at 1.5", s, ok)
	}
	if _, ok := ex.Slowdown(r50, lm); !ok {
		t.Fatal("the promise is not symmetric")
	}
	if _, ok := ex.Slowdown(r50b, gavelJob("e", "LM", 20)); ok {
		t.Fatal("a second pair of jobs got the same type pair's probe")
	}
	if _, ok := ex.Slowdown(lm, tr); ok {
		t.Fatal("a job holding a promise got a second one")
	}
	ex.Settle()
	if w := ex.Shared(lm, r50); w != 300 {
		t.Fatalf("probe window %v", w)
	}
	if _, ok := ex.Slowdown(gavelJob("e", "LM", 20), r50b); ok {
		t.Fatal("a type pair in flight probed twice")
	}
	if _, ok := ex.Slowdown(tr, r50b); !ok {
		t.Fatal("a second probe under the cap of 2 refused")
	}
	if _, ok := ex.Slowdown(gavelJob("f", "A3C", 4), gavelJob("g", "CycleGAN", 1)); ok {
		t.Fatal("a third probe over the cap of 2")
	}
	ex.Settle()
	if over := ex.Measured(r50, lm, 1.2, 1.4); over {
		t.Fatal("1.4 judged over 1.5")
	}
	if s, ok := ex.Slowdown(lm, r50b); !ok || math.Abs(s-1.4) > 1e-12 {
		t.Fatalf("LM beside ResNet-50 after its probe: %v %v, want 1.4", s, ok)
	}
	if ex.Shared(lm, r50b) != 0 {
		t.Fatal("a judged pair probed again")
	}
	// LM at another batch size beside ResNet-50: estimated by the 1.4
	// the models measured, not the predictor's 2.0.
	if s, ok := ex.Slowdown(gavelJob("h", "LM", 80), r50b); !ok || math.Abs(s-1.4) > 1e-12 {
		t.Fatalf("model-pair prior: %v %v", s, ok)
	}
	ex.Settle()
	if over := ex.Measured(tr, r50b, 1.1, 1.9); !over {
		t.Fatal("1.9 judged within 1.5")
	}
	if s, _ := ex.Slowdown(r50, tr); s != 1.9 {
		t.Fatalf("a pair judged bad: ResNet-50's side %v, want the measured 1.9 (over the bound)", s)
	}
	if _, err := NewExplorePairs(PlacementPairs{}, 0.9, cfg); err == nil {
		t.Fatal("bound 0.9 accepted")
	}
}

// A probe with nothing measured leaves its pair unjudged and frees its slot.
func TestExplorePairsNothingMeasured(t *testing.T) {
	_, graphs := excerpt(t)
	cfg := DefaultExplore()
	cfg.MaxInFlight = 1
	ex, err := NewExplorePairs(PlacementPairs{Graphs: graphs, Predictor: fixed(1.2)}, 1.5, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := gavelJob("a", "LM", 20), gavelJob("b", "ResNet-50", 64)
	if ex.Shared(a, b) == 0 || ex.Measured(a, b, 0, 0) {
		t.Fatal("probe or verdict wrong")
	}
	if ex.Shared(a, b) == 0 {
		t.Fatal("a pair with nothing measured was judged")
	}
}
