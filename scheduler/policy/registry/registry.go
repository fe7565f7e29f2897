// Package registry builds policies by name: "<ordering>" or
// "<ordering>+<placement>", e.g. "tiresias-las" or
// "fifo+consolidated". A bare ordering gets its paper's default placement.
package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/fluid"
	"github.com/caravan-dl/caravan/scheduler/policy/optimus"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

type ordering struct {
	build func(Config) (policy.Orderer, error)
	// whole builds policies that are more than an ordering (Optimus
	// allocates worker counts itself and only borrows the placer).
	whole func(Config, policy.Placer) (policy.Policy, error)
	// placement is the default placement of the ordering's paper.
	placement string
}

var orderings = map[string]ordering{
	"fifo": {build: func(c Config) (policy.Orderer, error) {
		return order.NewFIFO(order.FIFOConfig{Backfill: c.FIFOBackfill}), nil
	}, placement: "yarn"}, // Tiresias' baseline: YARN-CS placement, head-of-line blocking
	"srtf-oracle": {build: func(Config) (policy.Orderer, error) { return order.NewSRTFOracle(), nil }, placement: "consolidated"},
	"tiresias-las": {build: func(c Config) (policy.Orderer, error) {
		return order.NewLAS(c.Queues)
	}, placement: "consolidated"},
	// 2D-LAS with the reference simulator's multi-level feedback queue
	// discipline inside each queue (see order.LASMLFQ).
	"tiresias-las-mlfq": {build: func(c Config) (policy.Orderer, error) {
		return order.NewLASMLFQ(c.Queues)
	}, placement: "consolidated"},
	"tiresias-gittins": {build: func(c Config) (policy.Orderer, error) {
		return order.NewGittins(order.GittinsConfig{QueueConfig: c.Queues, Prior: c.GittinsPrior, Delta: c.GittinsDelta})
	}, placement: "consolidated"},
	"fair":  {build: func(c Config) (policy.Orderer, error) { return order.NewFair(c.Fair) }, placement: "consolidated"},
	"lucid": {build: func(c Config) (policy.Orderer, error) { return order.NewLucid(c.Lucid) }, placement: "consolidated"},
	// Fluid water-fills tuning jobs' trials (Job.Group) over their share
	// of GPUs; ordinary jobs go first, in FIFO order, on the placement.
	"fluid": {whole: func(c Config, p policy.Placer) (policy.Policy, error) {
		inner := policy.NewFramework(order.NewFIFO(order.FIFOConfig{Backfill: c.FIFOBackfill}), p)
		return fluid.New(c.Fluid, inner), nil
	}, placement: "consolidated"},
	// Optimus places a job's tasks on the fewest servers: consolidated.
	"optimus": {whole: func(c Config, p policy.Placer) (policy.Policy, error) {
		return optimus.New(c.Optimus, p)
	}, placement: "consolidated"},
}

var placements = map[string]func(Config) (policy.Placer, error){
	"consolidated": func(Config) (policy.Placer, error) { return place.NewConsolidated(), nil },
	"network-aware": func(c Config) (policy.Placer, error) {
		c.Network.BatchSize = 0
		return place.NewNetwork(c.Network), nil
	},
	"network-aware-batch": func(c Config) (policy.Placer, error) {
		if c.Network.BatchSize <= 1 {
			c.Network.BatchSize = 8
		}
		return place.NewNetwork(c.Network), nil
	},
	"interference-aware": func(c Config) (policy.Placer, error) {
		c.Interference.Pairs = nil // the bounded variant has its own name
		return place.NewInterference(c.Interference), nil
	},
	"frag-aware": func(c Config) (policy.Placer, error) { return place.NewFrag(c.Frag), nil },
	"yarn": func(c Config) (policy.Placer, error) {
		c.Yarn.Profiled = false
		return place.NewYarn(c.Yarn), nil
	},
	"yarn-profiled": func(c Config) (policy.Placer, error) {
		c.Yarn.Profiled = true
		return place.NewYarn(c.Yarn), nil
	},
}

// New builds the named policy with cfg.
func New(name string, cfg Config) (policy.Policy, error) {
	oname, pname, _ := strings.Cut(strings.TrimSpace(name), "+")
	o, ok := lookup(oname, &cfg)
	if !ok {
		return nil, unknown(name)
	}
	if pname == "" {
		pname = o.placement
	}
	mk, ok := placements[pname]
	if !ok {
		mk, ok = extraPlacements[pname]
	}
	if !ok {
		return nil, unknown(name)
	}
	pl, err := mk(cfg)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	if o.whole != nil {
		p, err := o.whole(cfg, pl)
		if err != nil {
			return nil, fmt.Errorf("policy %q: %w", name, err)
		}
		return p, nil
	}
	ord, err := o.build(cfg)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	return policy.NewFramework(ord, pl), nil
}

func unknown(name string) error {
	return fmt.Errorf("unknown policy %q: valid orderings are %s, optionally followed by +<placement> with placement one of %s",
		name, strings.Join(Orderings(), ", "), strings.Join(Placements(), ", "))
}

// Orderings lists the ordering names.
func Orderings() []string { return sortedKeys(orderings) }

// Placements lists the placement names.
func Placements() []string { return sortedKeys(placements) }

// Names lists every valid policy name: each bare ordering, then every
// ordering+placement combination.
func Names() []string {
	var out []string
	out = append(out, Orderings()...)
	for _, o := range Orderings() {
		for _, p := range Placements() {
			out = append(out, o+"+"+p)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
