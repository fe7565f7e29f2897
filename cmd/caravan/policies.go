package main

import (
	"fmt"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/caravan-dl/caravan/scheduler/sim"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

func policyNames() []string {
	names := registry.Names()
	for _, o := range registry.Orderings() {
		if o != "optimus" { // Optimus chooses its own placement
			names = append(names, o+"+spread")
		}
	}
	return names
}

// policyConfig builds the registry config from flags; the Gittins prior
// is read only when a Gittins policy is asked for.
func (f *scenarioFlags) policyConfig(traceSpec string, policies []string) (registry.Config, error) {
	c := registry.Config{FIFOBackfill: f.backfill}
	c.Queues.PromoteKnob = f.promote
	limits, err := registry.ParseQueueLimits(f.queueLimits)
	if err != nil {
		return c, err
	}
	c.SetQueueLimits(limits)
	if !anyContains(policies, "gittins") {
		return c, nil
	}
	path := f.prior
	if path == "auto" {
		path = autoPath("auto", traceSpec, "tiresias/yarn-gput1000.csv")
	}
	if path == "" || path == "none" {
		return c, fmt.Errorf("gittins policies need --gittins-prior (e.g. ../shared/traces/tiresias/yarn-gput1000.csv)")
	}
	prior, err := trace.LoadGittinsSamples(path)
	if err != nil {
		return c, err
	}
	c.GittinsPrior = prior
	return c, nil
}

func anyContains(xs []string, sub string) bool {
	for _, x := range xs {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}

// factory builds a fresh policy per run: policies keep state. It adds
// "<ordering>+spread", the simulator's placement-blind baseline, to the
// registry's names.
func factory(c registry.Config) sim.Factory {
	return func(name string) (policy.Policy, error) {
		base, ok := strings.CutSuffix(name, "+spread")
		if !ok {
			p, err := registry.New(name, c)
			if err != nil {
				return nil, err
			}
			return p, nil
		}
		p, err := registry.New(base+"+consolidated", c)
		if err != nil {
			return nil, err
		}
		fw, ok := p.(*policy.Framework)
		if !ok {
			return nil, fmt.Errorf("policy %q: %s chooses its own placement", name, base)
		}
		return policy.NewFramework(fw.Order, sim.Spread{}), nil
	}
}

// timeModel says how the simulator advances time for a policy: event
// driven, event driven with exact queue-threshold timers, or polled every
// --quantum (periodic re-planning).
func timeModel(p policy.Policy) string {
	w := sim.WakerOf(p)
	if w == nil {
		return "quantum: re-plans every --quantum"
	}
	if _, queued := w.(interface{ Queues() int }); queued {
		return "events + exact demotion/starvation times (no quantum)"
	}
	return "events only (no quantum)"
}
