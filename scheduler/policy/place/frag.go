package place

import (
	"math"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// TaskType is one kind of request in the workload: a per-GPU share
// (Fraction < 1, one GPU) or GPUs whole GPUs on one node.
type TaskType struct {
	Fraction float64
	GPUs     int
	Weight   float64 // popularity; normalised over all types
}

// FragConfig tunes the fragmentation-aware placer.
type FragConfig struct {
	// Prior request-size distribution mixed with what the snapshots show;
	// default: one whole GPU.
	Prior []TaskType
	// PriorWeight is how many jobs the prior counts as; default 10.
	PriorWeight float64
}

// Frag is FGD (Weng et al., ATC'23, "Beware of Fragmentation"): a node's
// fragmentation for a task type m is the free GPU share m cannot use —
// all of it if m does not fit on the node at all, else the partial GPUs too
// small for m — and its expected fragmentation weighs the types by
// popularity. Each worker goes to the GPU whose node's expected
// fragmentation grows least (ties: fullest GPU, then node order). The
// type distribution is learned from every snapshot's queued and running
// jobs on top of the prior. A whole-GPU gang that fits one node takes the
// node with the least growth; larger ones are consolidated.
type Frag struct {
	cfg   FragConfig
	types []TaskType
}

// NewFrag returns the fragmentation-aware placer.
func NewFrag(cfg FragConfig) *Frag {
	if len(cfg.Prior) == 0 {
		cfg.Prior = []TaskType{{Fraction: 1, GPUs: 1, Weight: 1}}
	}
	if cfg.PriorWeight <= 0 {
		cfg.PriorWeight = 10
	}
	f := &Frag{cfg: cfg}
	f.types = normalise(cfg.Prior, cfg.PriorWeight, nil)
	return f
}

// Name is "frag-aware".
func (*Frag) Name() string { return "frag-aware" }

// Shape depends only on the demand.
func (*Frag) Shape(_ *policy.Job, d policy.Demand) policy.ShapeKey { return policy.DefaultShape(d) }

// ShapesByDemand: Shape is policy.DefaultShape of the demand
// (policy.DemandShaper).
func (*Frag) ShapesByDemand() bool { return true }

// Types is the current request-size distribution.
func (f *Frag) Types() []TaskType { return f.types }

// ObserveSnapshot relearns the request-size distribution.
func (f *Frag) ObserveSnapshot(s *policy.Snapshot) {
	counts := map[TaskType]float64{}
	for _, j := range s.Jobs {
		if j == nil || (j.State != policy.Queued && j.State != policy.Running) {
			continue
		}
		if d, err := policy.DemandOf(j); err == nil {
			counts[typeOf(d)]++
		}
	}
	f.types = normalise(f.cfg.Prior, f.cfg.PriorWeight, counts)
}

func typeOf(d policy.Demand) TaskType {
	if d.WholeGPU() {
		return TaskType{Fraction: 1, GPUs: d.Workers}
	}
	return TaskType{Fraction: math.Round(d.Fraction*100) / 100, GPUs: 1}
}

// normalise mixes the prior (worth priorWeight jobs) with observed counts.
func normalise(prior []TaskType, priorWeight float64, counts map[TaskType]float64) []TaskType {
	w := map[TaskType]float64{}
	pw := 0.0
	for _, t := range prior {
		pw += t.Weight
	}
	for _, t := range prior {
		k := TaskType{Fraction: t.Fraction, GPUs: t.GPUs}
		w[k] += priorWeight * t.Weight / pw
	}
	for k, c := range counts {
		w[k] += c
	}
	total := 0.0
	for _, v := range w {
		total += v
	}
	out := make([]TaskType, 0, len(w))
	for k, v := range w {
		k.Weight = v / total
		out = append(out, k)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].GPUs != out[b].GPUs {
			return out[a].GPUs < out[b].GPUs
		}
		return out[a].Fraction < out[b].Fraction
	})
	return out
}

// Place chooses the gang's slots.
func (f *Frag) Place(_ *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	if d.WholeGPU() {
		if ni := f.leastGrowthNode(c, d); ni >= 0 {
			return fillNode(c, ni, d, d.Workers), ""
		}
		return consolidate(c, d)
	}
	ov := overlay{}
	var p policy.Placement
	for w := 0; w < d.Workers; w++ {
		ni, gi, ok := f.leastGrowthGPU(c, d, ov)
		if !ok {
			return policy.Placement{}, "needs " + d.String() + ", no GPU has that much free"
		}
		g := ov.view(c, ni, gi)
		p.Slots = append(p.Slots, d.Slot(c.Nodes[ni].Name, &g))
		ov.take(c, ni, gi, d.Fraction, d.SlotMem(&g), 0)
	}
	return p, ""
}
