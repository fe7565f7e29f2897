package profile

import (
	"sort"
	"strconv"
	"strings"
)

// Shape key: GPUs per node, ascending, as placements.csv writes them.
func shapeKey(shape []int) (string, bool) {
	s := append([]int(nil), shape...)
	sort.Ints(s)
	var b strings.Builder
	for _, g := range s {
		if g < 1 || g > 9 {
			return "", false
		}
		b.WriteString(strconv.Itoa(g))
	}
	return b.String(), true
}

// StepTime is seconds per training step for a placement shape (GPUs per
// node, any order; empty or zero entries are ignored) at RefBatch per GPU.
//
// Measured shapes (up to 4 nodes × 4 GPUs) return the measurement.
// Others are modelled as compute + all-reduce:
//   - compute = step("1") − sync("1"), the single-GPU step;
//   - all-reduce on one node with g GPUs = measured sync of shape "g",
//     clamped to the largest measured g (intra-node ring time stays
//     roughly flat as g grows);
//   - across n ≥ 2 nodes = mean measured sync over shapes with n nodes
//     (placements.csv, then scalability.csv up to 16 nodes), linearly
//     interpolated between measured node counts and clamped beyond the
//     largest: a ring all-reduce costs 2(n−1)/n · size/bandwidth, which
//     saturates as n grows.
func (m *Model) StepTime(shape []int) float64 {
	var nodes []int
	for _, g := range shape {
		if g > 0 {
			nodes = append(nodes, g)
		}
	}
	if len(nodes) == 0 || !m.HasSpeed() {
		return 0
	}
	if k, ok := shapeKey(nodes); ok {
		if t, ok := m.step[k]; ok {
			return t
		}
	}
	compute := m.step["1"] - m.sync["1"]
	if len(nodes) == 1 {
		return compute + m.localSync(nodes[0])
	}
	return compute + m.networkSync(len(nodes))
}

func (m *Model) localSync(g int) float64 {
	for ; g >= 1; g-- {
		if s, ok := m.sync[strconv.Itoa(g)]; ok {
			return s
		}
	}
	return 0
}

func (m *Model) networkSync(n int) float64 {
	if s, ok := m.netSync[n]; ok {
		return s
	}
	lo, hi := 0, 0
	for k := range m.netSync {
		if k < n && k > lo {
			lo = k
		}
		if k > n && (hi == 0 || k < hi) {
			hi = k
		}
	}
	switch {
	case lo == 0 && hi == 0:
		return m.localSync(9)
	case hi == 0:
		return m.netSync[lo]
	case lo == 0:
		return m.netSync[hi]
	}
	w := float64(n-lo) / float64(hi-lo)
	return m.netSync[lo]*(1-w) + m.netSync[hi]*w
}

// Consolidated is the tightest shape for g GPUs on nodes of perNode GPUs:
// full nodes, then the remainder.
func Consolidated(g, perNode int) []int {
	if perNode < 1 {
		perNode = 1
	}
	var out []int
	for g > 0 {
		n := min(g, perNode)
		out = append(out, n)
		g -= n
	}
	return out
}

// Slowdown is StepTime(shape) over StepTime of the consolidated shape
// with the same GPUs (≥ 1 means slower than consolidated).
func (m *Model) Slowdown(shape []int, perNode int) float64 {
	g := 0
	for _, n := range shape {
		g += n
	}
	base := m.StepTime(Consolidated(g, perNode))
	if base <= 0 {
		return 1
	}
	return m.StepTime(shape) / base
}

// Throughput is samples per second on a shape at RefBatch per GPU.
func (m *Model) Throughput(shape []int) float64 {
	g := 0
	for _, n := range shape {
		g += n
	}
	t := m.StepTime(shape)
	if t <= 0 {
		return 0
	}
	return float64(g) * m.RefBatch / t
}
