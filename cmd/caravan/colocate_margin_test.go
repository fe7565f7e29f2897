package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/policy/colocate"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// -colocate-margin makes the live predicted rule conservative
// (FitOptions.Margin); a bad share, or a margin without the predicted
// rule, is an error naming the flag.
func TestSchedulerColocateMargin(t *testing.T) {
	gavel := repo.TestData(t, "gavel-throughputs", "simulation_throughputs.json")
	var w strings.Builder
	for _, args := range [][]string{
		{"-colocate-profiles", gavel, "-colocate-rule", "predicted", "-colocate-margin", "1"},
		{"-colocate-profiles", gavel, "-colocate-rule", "predicted", "-colocate-margin", "-0.1"},
		{"-colocate-profiles", gavel, "-colocate-rule", "predicted", "-colocate-margin", "NaN"},
		{"-colocate-profiles", gavel, "-colocate-rule", "oracle", "-colocate-margin", "0.1"},
		{"-colocate-margin", "0.1"},
		{"-colocate-margin", "some"},
	} {
		if _, _, err := parseSchedulerFlags(args, &w); err == nil || !strings.Contains(err.Error(), "colocate-margin") {
			t.Errorf("%q: %v, want an error naming -colocate-margin", args, err)
		}
	}

	// On the whole file: the margin's predictions are the plain fit's
	// scaled up, so it accepts a subset of the pairs under the bound.
	full := filepath.Join(repo.SharedTraces(t, "gavel-throughputs"), "simulation_throughputs.json")
	load := func(margin string) *colocate.PlacementPairs {
		cfg, _, err := parseSchedulerFlags([]string{"-policy", "fifo+interference-bounded", "-colocate-profiles", full,
			"-colocate-rule", "predicted", "-colocate-gpu", "p100", "-colocate-margin", margin, "-token", "t0ken-for-the-test"}, &w)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Pairs.(*colocate.PlacementPairs)
	}
	plain, margin := load("0"), load("0.1")
	g, err := profile.LoadGavel(full)
	if err != nil {
		t.Fatal(err)
	}
	graphs, err := profile.GavelGraphs()
	if err != nil {
		t.Fatal(err)
	}
	samples, _ := colocate.GavelSamples(g, "p100", graphs)
	acceptPlain, acceptMargin := 0, 0
	for _, s := range samples {
		p, m := plain.Predictor.Slowdown(s.Job, s.Partner), margin.Predictor.Slowdown(s.Job, s.Partner)
		if m < p {
			t.Fatalf("%s beside %s: margin predicts %.3f, below the plain %.3f", s.Job.Model, s.Partner.Model, m, p)
		}
		if p <= colocate.DefaultBound {
			acceptPlain++
		}
		if m <= colocate.DefaultBound {
			acceptMargin++
		}
	}
	t.Logf("P100 samples accepted ≤ %.1f: plain %d, margin 0.1 %d of %d", colocate.DefaultBound, acceptPlain, acceptMargin, len(samples))
	if acceptMargin >= acceptPlain {
		t.Fatalf("margin accepts %d samples, plain %d: not more conservative", acceptMargin, acceptPlain)
	}
}
