package colocate

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/profile"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

func gavelJob(id, model string, batch float64) *policy.Job {
	return &policy.Job{ID: id, Model: model, Features: policy.ModelFeatures{BatchSize: batch}, Workers: 1, Fraction: 0.5}
}

// fixed predicts one slowdown for every pair.
type fixed float64

func (f fixed) Slowdown(Job, Job) float64 { return float64(f) }

// The excerpt's pair: ResNet-18 (b32) 1.989× beside ResNet-50 (b64), which
// runs 1.186× slower. Each rule reports what it should.
func TestPlacementPairsRules(t *testing.T) {
	g, graphs := excerpt(t)
	r18, r50 := gavelJob("a", "ResNet-18", 32), gavelJob("b", "ResNet-50", 64)
	want18, want50, ok := g.Slowdowns("v100", TypeOf(r18), TypeOf(r50))
	if !ok || math.Abs(want18-1.989) > 0.001 || math.Abs(want50-1.186) > 0.001 {
		t.Fatalf("premise: measured %.3f %.3f %v", want18, want50, ok)
	}
	base := PlacementPairs{Gavel: g, GPU: "v100", Graphs: graphs, Predictor: fixed(1.3)}
	for _, c := range []struct {
		rule Rule
		want float64
		ok   bool
	}{{Exclusive, 0, false}, {Naive, 1, true}, {Oracle, want18, true}, {Predicted, 1.3, true}} {
		p := base
		p.Rule = c.rule
		got, ok := p.Slowdown(r18, r50)
		if ok != c.ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %.3f %v, want %.3f %v", c.rule, got, ok, c.want, c.ok)
		}
	}
	// A type Gavel never measured does not fit with anything, under any rule.
	p := base
	p.Rule = Predicted
	if _, ok := p.Slowdown(r18, gavelJob("c", "ResNet-18", 3)); ok {
		t.Error("an unmeasured batch size shared")
	}
	// Without measurements, Predicted needs only graph features.
	p.Gavel = nil
	if s, ok := p.Slowdown(r18, gavelJob("c", "ResNet-18", 3)); !ok || s != 1.3 {
		t.Errorf("no measurements: %.3f %v", s, ok)
	}
	if _, ok := p.Slowdown(r18, gavelJob("d", "NoSuchModel", 32)); ok {
		t.Error("a model without graph features shared")
	}
	if p.Class(r18) == p.Class(r50) || p.Class(r18) != p.Class(gavelJob("z", "ResNet-18", 32)) {
		t.Error("classes must follow the type")
	}
}

// The placement's default bound is this package's, chosen from the data.
func TestDefaultBoundsAgree(t *testing.T) {
	if place.DefaultSlowdownBound != DefaultBound {
		t.Fatalf("place %.2f, colocate %.2f", place.DefaultSlowdownBound, DefaultBound)
	}
}

// FitPairs on the real measurements fits, predicts a valid slowdown and
// is deterministic.
func TestFitPairsOnGavel(t *testing.T) {
	g, err := profile.LoadGavel(filepath.Join(repo.SharedTraces(t, "gavel-throughputs"), "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	graphs, err := profile.GavelGraphs()
	if err != nil {
		t.Fatal(err)
	}
	p1, err := FitPairs(g, "v100", graphs)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := FitPairs(g, "v100", graphs)
	a, b := gavelJob("a", "ResNet-50", 64), gavelJob("b", "LM", 20)
	s1, ok1 := p1.Slowdown(a, b)
	s2, ok2 := p2.Slowdown(a, b)
	if !ok1 || !ok2 || s1 != s2 || s1 < 1 {
		t.Fatalf("not deterministic or invalid: %v %v / %v %v", s1, ok1, s2, ok2)
	}
	if p1.PlacementName() != "colocate-predicted" {
		t.Errorf("name %q", p1.PlacementName())
	}
}
