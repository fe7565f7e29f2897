package place

import (
	"cmp"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/caravan-dl/caravan/internal/split"
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// nodeFit is how many workers of d fit on node n.
func nodeFit(n *policy.FreeNode, d policy.Demand) int {
	if d.WholeGPU() {
		if n.WholeFree == 0 || d.MemMiB == 0 {
			return n.WholeFree // a whole GPU asking no memory fits exactly the whole ones
		}
	} else if noShare(n.FreeSum, n.MaxFree, d) {
		return 0 // no GPU has the fraction (FitsOn's floor is 0 with margin)
	}
	c := 0
	for k := range n.GPUs {
		c += d.FitsOn(&n.GPUs[k])
	}
	return c
}

// noShare reports that a node of FreeSum sum and MaxFree max hosts no
// worker of the fractional demand d (FitsOn's floor is 0 with margin).
func noShare(sum, max float64, d policy.Demand) bool {
	return sum+1e-9 < d.Fraction || d.Fraction > max+2e-9
}

// fillNode places up to k workers of d on node ni alone.
func fillNode(c *policy.Capacity, ni int, d policy.Demand, k int) policy.Placement {
	w := c.NewGang(k, k)
	return w.Placement(fillNodeAt(w, 0, c, ni, d, k))
}

// gpuOrder appends to order node n's GPU positions in the order its
// slots for d fill them: fractions go to the fullest GPUs that still fit
// first.
func gpuOrder(n *policy.FreeNode, d policy.Demand, order []int) []int {
	for i := range n.GPUs {
		order = append(order, i)
	}
	if !d.WholeGPU() && !freeAscending(n.GPUs) { // a stable sort of sorted GPUs keeps them
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(n.GPUs[a].Free, n.GPUs[b].Free) })
	}
	return order
}

// fillNodeAt writes up to k slots of d on node ni through w, from slot
// at, and returns the slot after the last it wrote. Fractions go to the
// fullest GPUs that still fit first, so whole GPUs stay whole. Written
// through w, a gang's slots fill one slice (a slice per node copied on
// was a tenth of a preemption-heavy decision) and the Capacity has their
// GPUs without looking them up by name.
func fillNodeAt(w policy.GangWriter, at int, c *policy.Capacity, ni int, d policy.Demand, k int) int {
	n := &c.Nodes[ni]
	var buf [16]int
	for _, gi := range gpuOrder(n, d, buf[:0]) {
		f := min(d.FitsOn(&n.GPUs[gi]), k)
		if f > 0 {
			at = w.PutOn(at, ni, gi, f, d)
			k -= f
		}
		if k == 0 {
			break
		}
	}
	return at
}

// freeAscending reports that gs are in gpuOrder's order already (Free
// never decreasing, as cmp.Compare orders it): a gang of thousands of
// slots sorted every node's GPUs (mostly all free, or equally used).
func freeAscending(gs []policy.FreeGPU) bool {
	for k := 1; k < len(gs); k++ {
		if cmp.Compare(gs[k-1].Free, gs[k].Free) > 0 {
			return false
		}
	}
	return true
}

// bestSingleNode finds the node that fits the whole gang with the least
// capacity left over (best fit), or -1. (fitMemo.bestSingleNode is the
// same search over a memo's compact arrays.)
func bestSingleNode(c *policy.Capacity, d policy.Demand) int {
	sums, wholes, compact := c.NodeSums()
	best, bestLeft := -1, 0.0
	for i := range c.Nodes {
		var sum float64
		var whole int
		if compact { // the same summary, without reading the node
			sum, whole = sums[i], int(wholes[i])
		} else {
			sum, whole = c.Nodes[i].FreeSum, c.Nodes[i].WholeFree
		}
		if d.WholeGPU() && whole < d.Workers {
			continue
		}
		if sum+1e-9 < d.GPUs() || nodeFit(&c.Nodes[i], d) < d.Workers {
			continue
		}
		left := sum - float64(d.Workers)*d.Fraction // the share the node keeps
		if best < 0 || left < bestLeft-1e-9 {
			best, bestLeft = i, left
			if left < 1e-9 {
				break // exact fit: nothing can beat it
			}
		}
	}
	return best
}

// candidate is a node that can host some workers.
type candidate struct {
	node int
	fit  int
}

// candidates lists every node that hosts at least one worker.
func candidates(c *policy.Capacity, d policy.Demand) []candidate {
	var out []candidate
	for i := range c.Nodes {
		if f := nodeFit(&c.Nodes[i], d); f > 0 {
			out = append(out, candidate{i, f})
		}
	}
	return out
}

// take fills nodes in the given order until the gang is complete.
func take(c *policy.Capacity, d policy.Demand, cs []candidate) (policy.Placement, bool) {
	if p, ok := takeSplit(c, d, cs); ok {
		return p, len(p.Slots) == d.Workers
	}
	w := c.NewGang(d.Workers, d.Workers)
	at, need := 0, d.Workers
	for _, cd := range cs {
		if need == 0 {
			break
		}
		k := min(cd.fit, need)
		at = fillNodeAt(w, at, c, cd.node, d, k)
		need -= k
	}
	return w.Placement(at), need == 0
}

// takeSplitMin is the fewest slots take fills in parts side by side: an
// 80,001-slot gang spent ~1 ms filling its 10,000 nodes, serially.
var takeSplitMin = 8192

// takeSplit is take for a gang of at least takeSplitMin slots on more
// than one processor: each candidate's slots are counted first (as take
// would take them), so parts of the candidates fill their own ranges of
// the gang side by side. ok is false where it did not apply, or where a
// node gave fewer slots than its count (take then packs what it gives,
// serially).
func takeSplit(c *policy.Capacity, d policy.Demand, cs []candidate) (p policy.Placement, ok bool) {
	if d.Workers < takeSplitMin || split.Procs() < 2 {
		return p, false
	}
	off := make([]int, 0, len(cs)+1) // where each used candidate's slots start
	n := 0
	for _, cd := range cs {
		if n == d.Workers {
			break
		}
		off = append(off, n)
		n += min(cd.fit, d.Workers-n)
	}
	off = append(off, n)
	used := len(off) - 1
	w := c.NewGang(n, d.Workers)
	var short atomic.Bool
	k := max(min(split.Procs()*4, n/max(takeSplitMin, 1)), 1)
	split.Run(used, k, split.Procs(), func(_, lo, hi int) {
		for i := lo; i < hi && !short.Load(); i++ {
			if fillNodeAt(w, off[i], c, cs[i].node, d, off[i+1]-off[i]) != off[i+1] {
				short.Store(true)
			}
		}
	})
	if short.Load() {
		return p, false
	}
	return w.Placement(n), true
}

// byFitDesc sorts candidates by how much they host, largest first, so the
// fewest nodes are used (stable: node order among equals). Fits are small
// counts, so a long list is sorted by counting (the same stable order):
// a gang spanning 6,000 nodes spent a quarter of its placement sorting.
func byFitDesc(cs []candidate) { byFitDescIn(cs, nil) }

// byFitDescIn is byFitDesc with its counting sort's output in *buf
// (nil: allocated).
func byFitDescIn(cs []candidate, buf *[]candidate) {
	most := 0
	for _, c := range cs {
		if c.fit < 0 {
			most = -1
			break
		}
		most = max(most, c.fit)
	}
	if len(cs) < minCounted || most < 0 || most > 4*len(cs) {
		slices.SortStableFunc(cs, func(a, b candidate) int { return cmp.Compare(b.fit, a.fit) })
		return
	}
	at := make([]int, most+2) // at[most-fit+1]: how many fit more, then where the next goes
	for _, c := range cs {
		at[most-c.fit+1]++
	}
	for k := 1; k < len(at); k++ {
		at[k] += at[k-1]
	}
	var out []candidate
	if buf != nil {
		out = growTo(*buf, len(cs))
		*buf = out
	} else {
		out = make([]candidate, len(cs))
	}
	for _, c := range cs {
		out[at[most-c.fit]] = c
		at[most-c.fit]++
	}
	copy(cs, out)
}

// minCounted is the shortest candidate list byFitDesc sorts by counting.
const minCounted = 64

func noRoom(d policy.Demand, free int) string {
	return "needs " + d.String() + ", no set of nodes hosts it (" + strconv.Itoa(free) + " workers fit in total)"
}

func sumFit(cs []candidate) int {
	s := 0
	for _, c := range cs {
		s += c.fit
	}
	return s
}
