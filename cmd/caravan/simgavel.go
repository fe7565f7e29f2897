package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/colocate"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/caravan-dl/caravan/scheduler/profile"
	"github.com/caravan-dl/caravan/scheduler/sim"
)

// gavelFlags configure --workload gavel: single-GPU trace jobs become
// Gavel job types sharing GPUs under co-location rules (issue #18).
type gavelFlags struct {
	path, gpu    string
	bound, share float64
	maxHours     float64
	// explore tunes fifo+colocate-explore: probe window (s), probes in
	// flight (0: a quarter of the GPUs)
	window float64
	cap    int
}

// colocSuffix names the co-location placements: <ordering>+colocate-<rule>.
const colocSuffix = "+colocate-"

func addGavelFlags(fs *flag.FlagSet, f *gavelFlags) {
	fs.StringVar(&f.path, "gavel", "auto", "--workload gavel: Gavel's simulation_throughputs.json; auto = gavel-throughputs/ next to the trace's directory")
	fs.StringVar(&f.gpu, "gavel-gpu", "v100", "--workload gavel: GPU type whose measurements apply (v100, p100, k80)")
	fs.Float64Var(&f.bound, "colocate-bound", colocate.DefaultBound, "--workload gavel: largest slowdown a co-location may cause either job")
	fs.Float64Var(&f.maxHours, "gavel-max-hours", 8, "--workload gavel: cap each job's run time (hours; 0 = none)")
	fs.Float64Var(&f.share, "gavel-share", 0.5, "--workload gavel: GPU share each job asks for (0.5: two may share a GPU)")
	fs.Float64Var(&f.window, "explore-window", colocate.DefaultExplore().Window, "+colocate-explore: seconds an unjudged pair shares on trial before its measured slowdowns decide")
	fs.IntVar(&f.cap, "explore-cap", 0, "+colocate-explore: probes in flight at once (0: a quarter of the GPUs)")
}

// gavelScenario makes sc a Gavel-type workload and returns a factory that
// also builds "<ordering>+colocate-<exclusive|naive|predicted|oracle|explore>":
// the interference-bounded placement under that rule.
func (f *scenarioFlags) gavelScenario(stderr io.Writer, sc sim.Scenario, pc registry.Config, policies []string) (sim.Scenario, sim.Factory, error) {
	gf := f.gavel
	path := autoPath(gf.path, f.spec.Trace, "gavel-throughputs/simulation_throughputs.json")
	if path == "" {
		return sc, nil, fmt.Errorf("--workload gavel needs --gavel (e.g. ../shared/traces/gavel-throughputs/simulation_throughputs.json)")
	}
	g, err := profile.LoadGavel(path)
	if err != nil {
		return sc, nil, err
	}
	if g.GPUs[gf.gpu] == nil {
		return sc, nil, fmt.Errorf("--gavel-gpu %q: not in %s", gf.gpu, path)
	}
	if !(gf.bound >= 1) {
		return sc, nil, fmt.Errorf("--colocate-bound %v: want ≥ 1", gf.bound)
	}
	jobs, dropped, err := sim.AssignGavel(sc.Jobs, sim.GavelOptions{Types: g.Types(gf.gpu), Fraction: gf.share, MaxWork: gf.maxHours * 3600, Seed: f.seed})
	if err != nil {
		return sc, nil, err
	}
	fmt.Fprintf(stderr, "gavel workload: %d single-GPU jobs of %s types, %d multi-GPU jobs dropped, bound %.2f\n", len(jobs), gf.gpu, dropped, gf.bound)
	sc.Jobs = jobs
	pairs := sim.NewGavelPairs(g, gf.gpu)
	pairs.Limit = gf.bound
	sc.Config.Pairs = pairs
	base := colocate.PlacementPairs{Gavel: g, GPU: gf.gpu}
	if anyContains(policies, colocSuffix+string(colocate.Predicted)) || anyContains(policies, colocSuffix+exploreRule) {
		if base.Graphs, err = profile.GavelGraphs(); err != nil {
			return sc, nil, err
		}
		samples, _ := colocate.GavelSamples(g, gf.gpu, base.Graphs)
		if base.Predictor, err = colocate.NewHeldOut(samples); err != nil {
			return sc, nil, err
		}
	}
	cfg := colocate.DefaultExplore()
	cfg.Window, cfg.MaxInFlight = gf.window, gf.cap
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = max(1, sim.TotalGPUs(sc.Cluster)/4)
	}
	if gf.cap < 0 || !(gf.window > 0) {
		return sc, nil, fmt.Errorf("--explore-window %v, --explore-cap %d: want a window > 0 and a cap ≥ 0", gf.window, gf.cap)
	}
	return sc, colocFactory(pc, base, gf.bound, cfg), nil
}

// exploreRule names the placement that probes unjudged pairs
// (colocate.ExplorePairs; the held-out predictor orders probes, as
// `colocate bench -explore`): <ordering>+colocate-explore.
const exploreRule = "explore"

// colocFactory builds the co-location policies and defers the rest to
// the usual factory.
func colocFactory(pc registry.Config, base colocate.PlacementPairs, bound float64, explore colocate.Explore) sim.Factory {
	plain := factory(pc)
	return func(name string) (policy.Policy, error) {
		o, rule, ok := strings.Cut(name, colocSuffix)
		if !ok {
			return plain(name)
		}
		pp := base
		pp.Rule = colocate.Rule(rule)
		c := pc
		c.Interference.Pairs, c.Interference.SlowdownBound = &pp, bound
		switch pp.Rule {
		case colocate.Exclusive, colocate.Naive, colocate.Oracle, colocate.Predicted:
		case exploreRule:
			ex, err := colocate.NewExplorePairs(base, bound, explore) // a fresh learner per run
			if err != nil {
				return nil, err
			}
			c.Interference.Pairs = ex
		default:
			return nil, fmt.Errorf("policy %q: rule %q: want exclusive, naive, predicted, oracle or explore", name, rule)
		}
		return registry.New(o+"+interference-bounded", c)
	}
}

// writeColocTable prints what issue #18 compares: makespan, JCT, waiting
// and co-locations by interference model and above the bound.
func writeColocTable(w io.Writer, rs []*sim.Result) {
	fmt.Fprintf(w, "\n%-36s %12s %12s %12s %10s %10s %10s %10s %8s %8s %10s\n", "policy (gavel workload)", "makespan s", "avg JCT s", "avg wait s",
		"measured", "modelled", ">bound", "sustained", "probes", "failed", "probe>b s")
	for _, r := range rs {
		m, c := r.Metrics, r.Colocations
		fmt.Fprintf(w, "%-36s %12.0f %12.0f %12.0f %10d %10d %10d %10d %8d %8d %10.0f\n", r.Policy, m.Makespan, m.AvgJCT, m.AvgQueue,
			c.Measured, c.Modelled, c.OverBound, c.SustainedOver, c.Probes, c.ProbesOver, c.ProbeOverSeconds)
	}
}
