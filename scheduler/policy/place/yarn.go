package place

import (
	"math"
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// YarnConfig tunes the YARN capacity-scheduler placement.
type YarnConfig struct {
	// Profiled relaxes the rule for jobs with a speed profile (Tiresias'
	// profile-based placement: consolidate only the models that suffer
	// from spreading): when no placement the rule accepts exists, such a
	// job may take the consolidated placer's spread placement if its
	// measured step time there is at most (1 + SpreadTolerance) × the
	// packed one's. Off for "yarn" (the strict baseline), on for
	// "yarn-profiled".
	Profiled bool
	// SpreadTolerance is the accepted slowdown of a spread gang; default
	// 0.05.
	SpreadTolerance float64
}

// Yarn is the YARN capacity scheduler's GPU placement, the baseline of the
// Tiresias paper (its simulator's ms_yarn_placement): all of a gang's GPUs
// come from one rack; a gang that fits on one node must run on one node
// (first fit in node order); a larger gang takes whole idle nodes, plus one
// node for the remainder. It never splits a small gang over partly free
// nodes, which the consolidated placer does and which makes a stronger
// baseline than the one the papers report against.
//
// Two extensions: a gang larger than every rack may span racks (else it
// could never run), and fractional gangs, which YARN cannot express, are
// placed as by Consolidated.
type Yarn struct{ cfg YarnConfig }

// NewYarn returns the YARN-CS placer.
func NewYarn(cfg YarnConfig) *Yarn {
	if cfg.SpreadTolerance <= 0 {
		cfg.SpreadTolerance = 0.05
	}
	return &Yarn{cfg: cfg}
}

// Name is "yarn", or "yarn-profiled" with the profile relaxation.
func (y *Yarn) Name() string {
	if y.cfg.Profiled {
		return "yarn-profiled"
	}
	return "yarn"
}

// Shape is the demand, except that jobs the profile rule may relax are
// never memoised together: whether they fit depends on their model.
func (y *Yarn) Shape(j *policy.Job, d policy.Demand) policy.ShapeKey {
	k := policy.DefaultShape(d)
	if y.relaxes(j) {
		k.Extra = math.NaN()
	}
	return k
}

func (y *Yarn) relaxes(j *policy.Job) bool {
	return y.cfg.Profiled && speedOf(j) != nil
}

// Place applies the YARN-CS rule, then the profile relaxation.
func (y *Yarn) Place(j *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	if !d.WholeGPU() {
		return consolidate(c, d)
	}
	if p, ok := yarnPlace(c, d); ok {
		return p, ""
	}
	why := "yarn: needs " + d.String() + yarnNeed(c, d)
	if !y.relaxes(j) {
		return policy.Placement{}, why
	}
	p, bad := consolidate(c, d)
	if bad != "" {
		return p, bad
	}
	if pen := spreadPenalty(j.Speed, c, d, p); pen > y.cfg.SpreadTolerance {
		return policy.Placement{}, why + "; spreading would cost " + strconv.FormatFloat(100*pen, 'f', 0, 64) + " %"
	}
	return p, ""
}

// yarnNeed says what the rule asks for.
func yarnNeed(c *policy.Capacity, d policy.Demand) string {
	if d.Workers <= maxNodeGPUs(c) {
		return " on one node"
	}
	return " as whole idle nodes in one rack"
}

// yarnPlace tries each rack in order, then (for a gang larger than every
// rack) the whole cluster as one.
func yarnPlace(c *policy.Capacity, d policy.Demand) (policy.Placement, bool) {
	if d.Workers <= maxNodeGPUs(c) {
		return onOneNode(c, d)
	}
	largest := 0
	for r := range c.Racks {
		if p, ok := idleNodes(c, d, c.RackNodes(r), false); ok {
			return p, true
		}
		largest = max(largest, c.RackGPUs(r))
	}
	if d.Workers > largest {
		return idleNodes(c, d, nil, true)
	}
	return policy.Placement{}, false
}

// onOneNode places a gang no larger than a node on the first node with
// room for all of it.
func onOneNode(c *policy.Capacity, d policy.Demand) (policy.Placement, bool) {
	n := firstFitNode(c, d)
	if n < 0 {
		return policy.Placement{}, false
	}
	return fillNode(c, n, d, d.Workers), true
}

// firstFitNode is the first node (in cluster order) with room for the
// whole gang, or -1.
func firstFitNode(c *policy.Capacity, d policy.Demand) int {
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.WholeFree >= d.Workers && nodeFit(n, d) >= d.Workers {
			return i
		}
	}
	return -1
}

// idleNodes takes whole idle nodes among ns (every node, in cluster
// order, if every is set) in order while the gang still fills them, then
// one more node with room for the remainder, as Tiresias'
// try_cross_node_alloc.
func idleNodes(c *policy.Capacity, d policy.Demand, ns []int32, every bool) (policy.Placement, bool) {
	count := len(ns)
	if every {
		count = len(c.Nodes)
	}
	at := func(k int) int {
		if every {
			return k
		}
		return int(ns[k])
	}
	need := d.Workers
	var full []int
	for k := 0; k < count && need > 0; k++ {
		i := at(k)
		n := &c.Nodes[i]
		if len(n.GPUs) == 0 || len(n.GPUs) > need {
			continue
		}
		if n.WholeFree == len(n.GPUs) && nodeFit(n, d) == len(n.GPUs) {
			full = append(full, i)
			need -= len(n.GPUs)
		}
	}
	last := -1
	if need > 0 {
		for k := 0; k < count; k++ {
			i := at(k)
			if containsIdx(full, i) {
				continue
			}
			if n := &c.Nodes[i]; n.WholeFree >= need && nodeFit(n, d) >= need {
				last = i
				break
			}
		}
		if last < 0 {
			return policy.Placement{}, false
		}
	}
	return takeIdle(c, d, full, last, need), true
}

// takeIdle is the placement on the whole nodes full and, if last >= 0,
// need more workers on node last.
func takeIdle(c *policy.Capacity, d policy.Demand, full []int, last, need int) policy.Placement {
	n := 0
	for _, i := range full {
		n += len(c.Nodes[i].GPUs)
	}
	if last >= 0 {
		n += need
	}
	w := c.NewGang(n, d.Workers)
	at := 0
	for _, i := range full {
		at = fillNodeAt(w, at, c, i, d, len(c.Nodes[i].GPUs))
	}
	if last >= 0 {
		at = fillNodeAt(w, at, c, last, d, need)
	}
	return w.Placement(at)
}

func containsIdx(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// maxNodeGPUs is the most GPUs any node has: a gang no larger fits "one node".
func maxNodeGPUs(c *policy.Capacity) int {
	m := 0
	for i := range c.Nodes {
		m = max(m, len(c.Nodes[i].GPUs))
	}
	return m
}

// spreadPenalty is how much slower (as a fraction) the job steps on p's
// shape than packed on whole nodes; +Inf when the profile does not know.
func spreadPenalty(prof policy.SpeedProfile, c *policy.Capacity, d policy.Demand, p policy.Placement) float64 {
	packed := packedShape(d.Workers, maxNodeGPUs(c))
	t0, t := prof.StepTime(packed), prof.StepTime(gangShape(p))
	if !(t0 > 0) || !(t > 0) {
		return math.Inf(1)
	}
	return t/t0 - 1
}

// packedShape fills nodes of per GPUs one after another.
func packedShape(workers, per int) []int {
	var s []int
	for workers > 0 && per > 0 {
		k := min(workers, per)
		s = append(s, k)
		workers -= k
	}
	return s
}

// gangShape counts a placement's workers per node, in slot order.
func gangShape(p policy.Placement) []int {
	var s []int
	idx := map[string]int{}
	for _, sl := range p.Slots {
		i, ok := idx[sl.Node]
		if !ok {
			i = len(s)
			idx[sl.Node] = i
			s = append(s, 0)
		}
		s[i]++
	}
	return s
}
