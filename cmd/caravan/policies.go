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
		names = append(names, o+"+spread")
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
			return markEventDriven(name, p), nil
		}
		p, err := registry.New(base+"+consolidated", c)
		if err != nil {
			return nil, err
		}
		fw, ok := p.(*policy.Framework)
		if !ok {
			return nil, fmt.Errorf("policy %q: %s chooses its own placement", name, base)
		}
		return markEventDriven(name, policy.NewFramework(fw.Order, sim.Spread{})), nil
	}
}

// eventDriven orderings decide the same way until a job arrives or
// finishes: FIFO ranks by submit time, and under SRTF time only shrinks a
// running job's remaining time, moving it up, never causing a preemption.
// Telling the simulator lets it skip quanta for them (sim.EventDriven).
var eventDriven = map[string]bool{"fifo": true, "srtf-oracle": true}

type eventDrivenPolicy struct{ policy.Policy }

func (eventDrivenPolicy) EventDriven() bool { return true }

// ObserveFinished forwards to the wrapped policy, if it learns.
func (p eventDrivenPolicy) ObserveFinished(j *policy.Job) {
	if o, ok := p.Policy.(interface{ ObserveFinished(*policy.Job) }); ok {
		o.ObserveFinished(j)
	}
}

func markEventDriven(name string, p policy.Policy) policy.Policy {
	ordering, _, _ := strings.Cut(name, "+")
	if _, ok := p.(sim.EventDriven); ok || !eventDriven[ordering] {
		return p
	}
	return eventDrivenPolicy{p}
}
