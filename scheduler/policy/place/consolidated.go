package place

import (
	"cmp"
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Consolidated packs a gang onto the fewest nodes, then the fewest racks:
// one node if any fits it (best fit, to keep big holes for big gangs);
// else the rack that needs the fewest nodes, taking its roomiest nodes
// first; else the roomiest nodes cluster-wide, grouped by rack. It is the
// default placement of FIFO, SRTF and Tiresias (which consolidates).
type Consolidated struct{}

// NewConsolidated returns the consolidated placer.
func NewConsolidated() *Consolidated { return &Consolidated{} }

// Name is "consolidated".
func (*Consolidated) Name() string { return "consolidated" }

// Shape depends only on the demand.
func (*Consolidated) Shape(_ *policy.Job, d policy.Demand) policy.ShapeKey {
	return policy.DefaultShape(d)
}

// ShapesByDemand: Shape is policy.DefaultShape of the demand
// (policy.DemandShaper).
func (*Consolidated) ShapesByDemand() bool { return true }

// PlacesOnCapacity: Place reads only the demand and the Capacity's
// nodes and GPUs (policy.CapacityPlacer), so the Framework may replay
// its preemption trials.
func (*Consolidated) PlacesOnCapacity() bool { return true }

// Harder (policy.DemandMonotone): consolidate fails exactly when the
// nodes together host fewer than the gang's workers (nodeFit summed), and
// nodeFit only falls for a larger fraction or memory per worker, on less
// capacity. b is harder than a when it has as many workers or more and,
// both fractional, as large a fraction or larger and as much memory or
// more (a memory of 0 caps nothing); both whole-GPU, as much memory
// (0 asks a whole GPU's, which every whole GPU holds) or a's is 0.
func (*Consolidated) Harder(a, b policy.Demand) bool {
	if b.Workers < a.Workers {
		return false
	}
	switch aw, bw := a.WholeGPU(), b.WholeGPU(); {
	case aw != bw:
		return false
	case aw:
		return a.MemMiB == 0 || b.MemMiB >= a.MemMiB
	default:
		return b.Fraction >= a.Fraction && (a.MemMiB == 0 || b.MemMiB >= a.MemMiB)
	}
}

// CountsFits (policy.FitCounter): consolidate fails exactly when the
// nodes' fits sum below the gang's workers, and a node's fit is its GPUs'
// Demand.FitsOn summed (nodeFit's shortcuts give the same count: a
// whole-GPU gang asking no memory fits each whole GPU once; a node whose
// FreeSum or MaxFree is short of the fraction has no GPU that fits one).
func (*Consolidated) CountsFits() bool { return true }

// SeesWholeNodesOnly (policy.WholeSighted): for a whole-GPU gang
// consolidate reads a node only through nodeFit, which is 0 on a node
// without a whole GPU whatever else it holds; the single-node search
// skips a node with fewer whole GPUs than workers before reading its
// FreeSum, and the candidates, racks' room and fills read only nodes
// hosting a worker. The memos keep every node's sums, but read them only
// for such nodes.
func (*Consolidated) SeesWholeNodesOnly() bool { return true }

// SeesFittingNodesOnly (policy.FitSighted): for a fractional gang
// consolidate likewise reads a node only through nodeFit, which is 0 on
// a node with no GPU hosting a worker; the memos' candidates and sum
// index hold only nodes hosting one, and the unmemoised single-node
// search reads another node's FreeSum but skips the node whatever that
// sum is.
func (*Consolidated) SeesFittingNodesOnly() bool { return true }

// Place chooses the gang's slots.
func (*Consolidated) Place(_ *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	return consolidate(c, d)
}

func consolidate(c *policy.Capacity, d policy.Demand) (policy.Placement, string) {
	m := fits(c, d) // nil: scan the nodes
	if m == nil {
		m = memoFor(c, d) // a shape searched before in this round
	}
	if m != nil && m.total < d.Workers {
		return policy.Placement{}, noRoom(d, m.total) // no node hosts the gang either
	}
	var n int
	if m != nil {
		n = m.bestSingleNode(d)
	} else {
		n = bestSingleNode(c, d)
	}
	if n >= 0 {
		return fillNode(c, n, d, d.Workers), ""
	}
	var cs []candidate
	var sorted *[]candidate
	if m != nil { // the memos' scratch: nothing keeps cs past this call
		ms := memos(c)
		cs = m.candidatesOf(ms.cands[:0])
		ms.cands, sorted = cs, &ms.sorted
	} else {
		cs = candidates(c, d)
		remember(c, d, cs)
	}
	if total := sumFit(cs); total < d.Workers {
		return policy.Placement{}, noRoom(d, total)
	}
	byFitDescIn(cs, sorted)
	if p, ok := bestRack(c, d, cs); ok {
		return p, ""
	}
	// Span racks: roomiest racks first, roomiest nodes within each.
	p, _ := take(c, d, groupByRack(c, cs))
	return p, ""
}

// bestRack places within the single rack needing the fewest nodes (the
// lowest-numbered such rack). Each rack counts its candidates in cs order
// until the gang is complete, all racks in one pass over cs.
func bestRack(c *policy.Capacity, d policy.Demand, cs []candidate) (policy.Placement, bool) {
	nodes, got := make([]int, len(c.Racks)), make([]int, len(c.Racks))
	for _, cd := range cs {
		if r := c.Nodes[cd.node].RackID; got[r] < d.Workers {
			nodes[r]++
			got[r] += cd.fit
		}
	}
	best := -1
	for r := range c.Racks {
		if got[r] >= d.Workers && (best < 0 || nodes[r] < nodes[best]) {
			best = r
		}
	}
	if best < 0 {
		return policy.Placement{}, false
	}
	return take(c, d, inRack(c, cs, best))
}

// splitByRack is inRack for every rack at once: parts[r] lists rack r's
// candidates in cs order, from one counting pass (filtering cs once per
// rack read it 250 times at 10,000 nodes). Each part is capped: appending
// to one never writes into the next.
func splitByRack(c *policy.Capacity, cs []candidate) [][]candidate {
	off := make([]int, len(c.Racks)+1)
	for _, cd := range cs {
		off[c.Nodes[cd.node].RackID+1]++
	}
	for r := range c.Racks {
		off[r+1] += off[r]
	}
	all, next := make([]candidate, len(cs)), slices.Clone(off[:len(c.Racks)])
	for _, cd := range cs {
		r := c.Nodes[cd.node].RackID
		all[next[r]] = cd
		next[r]++
	}
	parts := make([][]candidate, len(c.Racks))
	for r := range parts {
		parts[r] = all[off[r]:off[r+1]:off[r+1]]
	}
	return parts
}

func inRack(c *policy.Capacity, cs []candidate, rack int) []candidate {
	var out []candidate
	for _, cd := range cs {
		if c.Nodes[cd.node].RackID == rack {
			out = append(out, cd)
		}
	}
	return out
}

// groupByRack orders candidates rack by rack, roomiest rack first (a
// stable order: the lower rack on ties), keeping each rack's nodes in
// their (roomiest-first) order. One counting pass places every candidate
// at its rack's offset, where listing each rack's candidates took a pass
// over all of them per rack (250 racks at 10,000 nodes).
func groupByRack(c *policy.Capacity, cs []candidate) []candidate {
	room, next := make([]int, len(c.Racks)), make([]int, len(c.Racks))
	rackOf := make([]int32, len(cs))
	for k, cd := range cs {
		r := c.Nodes[cd.node].RackID
		rackOf[k] = int32(r)
		room[r] += cd.fit
		next[r]++ // the rack's candidate count, until offsets below
	}
	racks := make([]int, len(c.Racks))
	for i := range racks {
		racks[i] = i
	}
	slices.SortStableFunc(racks, func(a, b int) int { return cmp.Compare(room[b], room[a]) })
	at := 0
	for _, r := range racks {
		at, next[r] = at+next[r], at
	}
	out := make([]candidate, len(cs))
	for k, cd := range cs {
		r := rackOf[k]
		out[next[r]] = cd
		next[r]++
	}
	return out
}

// FitTotal is how many workers of d the Capacity's GPUs host together
// (policy.FitTotaler): the fit memo's total, brought up to date, or a
// scan's, kept as the memo where the Capacity logs its changes.
func (*Consolidated) FitTotal(c *policy.Capacity, d policy.Demand) int {
	if m := fits(c, d); m != nil {
		return m.total
	}
	cs := candidates(c, d)
	remember(c, d, cs)
	return sumFit(cs)
}
