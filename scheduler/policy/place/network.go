package place

import (
	"cmp"
	"slices"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// NetworkConfig tunes the network-aware placer.
type NetworkConfig struct {
	// UnknownLinkGbps stands in for nodes whose LinkGbps is 0; default 10.
	UnknownLinkGbps float64
	// BatchSize > 1 selects Liquid's batch mode: the framework hands over
	// this many queued jobs at a time and they are packed largest gang
	// first (best-fit decreasing), which packs better than arrival order
	// at the cost of strict priority inside the window. 0 or 1 is
	// immediate mode: jobs are placed one by one in priority order.
	BatchSize int
}

// Network is Liquid's network-aware placement. A gang that fits one node
// goes there (best fit, no network traffic). Otherwise it stays inside
// one rack if any rack can hold it, and among the possible node sets it
// maximises the slowest uplink the gang's traffic crosses (the bottleneck
// of ring all-reduce), then uses the fewest nodes. Only if no rack can hold
// it does the gang span racks, again fastest bottleneck first.
//
// A job with a speed profile (Job.Speed: its measured step time by
// placement shape, Liquid's knowledge of a job's compute/communication
// mix) is placed by it: among the nodes the rules above accept (the rack
// and link floor), the placer scores the packed node set and, for each
// node count from the packed one up to the gang size (at most 16 unless
// packing needs more), the most even split the free capacity allows, and
// takes the shape with the lowest step time (ties: fewer nodes, then the
// rules above). Spread parts go to the tightest nodes that hold them, so
// empty nodes stay whole. One node still wins unless a multi-node shape
// is measured strictly faster. Links come before the profile, which
// cannot see a slow uplink: racks are compared by bottleneck first, then
// step time. A placement exists exactly when the packed one does, so
// failures stay memoisable by the demand alone (DefaultShape).
type Network struct{ cfg NetworkConfig }

// NewNetwork returns the network-aware placer.
func NewNetwork(cfg NetworkConfig) *Network {
	if cfg.UnknownLinkGbps <= 0 {
		cfg.UnknownLinkGbps = 10
	}
	return &Network{cfg: cfg}
}

// Name is "network-aware", or "network-aware-batch" in batch mode.
func (n *Network) Name() string {
	if n.cfg.BatchSize > 1 {
		return "network-aware-batch"
	}
	return "network-aware"
}

// Shape depends only on the demand.
func (*Network) Shape(_ *policy.Job, d policy.Demand) policy.ShapeKey { return policy.DefaultShape(d) }

// ShapesByDemand: Shape is policy.DefaultShape of the demand
// (policy.DemandShaper).
func (*Network) ShapesByDemand() bool { return true }

// BatchSize is the batch window (≤ 1: immediate mode).
func (n *Network) BatchSize() int { return n.cfg.BatchSize }

// PackOrder packs the largest gangs first; ties keep priority order.
func (*Network) PackOrder(_ []*policy.Job, ds []policy.Demand) []int {
	idx := make([]int, len(ds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ds[b].GPUs(), ds[a].GPUs()) })
	return idx
}

// Place chooses the gang's slots.
func (n *Network) Place(j *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	prof := speedOf(j)
	single := bestSingleNode(c, d)
	if single >= 0 && (prof == nil || d.Workers < 2) {
		return fillNode(c, single, d, d.Workers), ""
	}
	cs := candidates(c, d)
	if total := sumFit(cs); total < d.Workers {
		return policy.Placement{}, noRoom(d, total)
	}
	var best option
	if c.Links.Len() > 0 {
		best, _ = n.onLinks(c, d, cs, prof) // measured pairs subsume racks
	} else {
		for _, part := range splitByRack(c, cs) {
			if o, ok := n.widest(c, d, part, prof); ok && o.better(best) {
				best = o
			}
		}
	}
	if best.nodes == nil {
		best, _ = n.widest(c, d, cs, prof)
	}
	if single >= 0 && !n.spreadWins(prof, d, best) {
		return fillNode(c, single, d, d.Workers), ""
	}
	p, _ := take(c, d, best.nodes)
	return p, ""
}

// spreadWins reports whether best, a node set for a gang that also fits
// one node, is measured strictly faster than the single node.
func (*Network) spreadWins(prof policy.SpeedProfile, d policy.Demand, best option) bool {
	if len(best.nodes) < 2 || !(best.step > 0) {
		return false
	}
	t := prof.StepTime([]int{d.Workers})
	return t > 0 && best.step < t && !nearlyEqual(best.step, t)
}

// option is one node set for a gang; each candidate's fit caps the
// workers take puts there.
type option struct {
	nodes      []candidate
	bottleneck float64
	// step is the profile's step time for the set (0 = no profile).
	step float64
}

func (o option) better(than option) bool {
	if than.nodes == nil {
		return true
	}
	if o.bottleneck != than.bottleneck {
		return o.bottleneck > than.bottleneck
	}
	if o.step > 0 && than.step > 0 && !nearlyEqual(o.step, than.step) {
		return o.step < than.step
	}
	return len(o.nodes) < len(than.nodes)
}

// widest finds, among cs, the node set with the fastest slowest link that
// still holds the gang, using the fewest (roomiest) nodes at that speed.
// Lowering the link floor only adds nodes, so the floor is binary-searched.
// With a speed profile, the nodes at that floor are then shaped by it
// (fastest).
func (n *Network) widest(c *policy.Capacity, d policy.Demand, cs []candidate, prof policy.SpeedProfile) (option, bool) {
	speeds := make([]float64, 0, len(cs))
	for _, cd := range cs {
		speeds = append(speeds, n.link(&c.Nodes[cd.node]))
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(speeds)))
	speeds = uniq(speeds)
	above := func(floor float64) []candidate {
		var set []candidate
		for _, cd := range cs {
			if n.link(&c.Nodes[cd.node]) >= floor {
				set = append(set, cd)
			}
		}
		return set
	}
	// first index (fastest floor) whose node set holds the gang
	k := sort.Search(len(speeds), func(i int) bool { return sumFit(above(speeds[i])) >= d.Workers })
	if k == len(speeds) {
		return option{}, false
	}
	set := above(speeds[k])
	byFitDesc(set)
	o := option{nodes: prefixHolding(set, d.Workers), bottleneck: speeds[k]}
	if prof != nil {
		o = fastest(prof, d, o, set)
	}
	return o, true
}

func uniq(xs []float64) []float64 {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// prefixHolding keeps the shortest prefix that holds workers.
func prefixHolding(cs []candidate, workers int) []candidate {
	got := 0
	for i, cd := range cs {
		got += cd.fit
		if got >= workers {
			return cs[:i+1]
		}
	}
	return cs
}

func (n *Network) link(fn *policy.FreeNode) float64 {
	if fn.LinkGbps > 0 {
		return fn.LinkGbps
	}
	return n.cfg.UnknownLinkGbps
}
