package place

import (
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// fragOf is the expected fragmentation of a node whose GPUs have the
// given free fractions, under the type distribution.
func fragOf(free []float64, types []TaskType) float64 {
	total, whole := 0.0, 0
	for _, v := range free {
		total += v
		if v >= 1-1e-9 {
			whole++
		}
	}
	f := 0.0
	for _, t := range types {
		f += t.Weight * fragFor(free, total, whole, t)
	}
	return f
}

// fragFor is the free share task type t cannot use on the node.
func fragFor(free []float64, total float64, whole int, t TaskType) float64 {
	if t.Fraction >= 1-1e-9 { // whole GPUs: partial GPUs are fragments
		if whole < t.GPUs {
			return total
		}
		return total - float64(whole)
	}
	fits, small := false, 0.0
	for _, v := range free {
		if v+1e-9 >= t.Fraction {
			fits = true
		} else {
			small += v
		}
	}
	if !fits {
		return total
	}
	return small
}

func freeVector(c *policy.Capacity, ni int, ov overlay, buf []float64) []float64 {
	buf = buf[:0]
	for gi := range c.Nodes[ni].GPUs {
		g := ov.view(c, ni, gi)
		buf = append(buf, g.Free)
	}
	return buf
}

// leastGrowthGPU is FGD's choice for one fractional worker.
func (f *Frag) leastGrowthGPU(c *policy.Capacity, d policy.Demand, ov overlay) (int, int, bool) {
	bn, bg := -1, -1
	var bestGrowth, bestFree float64
	var buf []float64
	for ni := range c.Nodes {
		if c.Nodes[ni].FreeSum+1e-9 < d.Fraction && !ov.touches(ni) {
			continue
		}
		buf = freeVector(c, ni, ov, buf)
		before := fragOf(buf, f.types)
		for gi := range c.Nodes[ni].GPUs {
			g := ov.view(c, ni, gi)
			if d.FitsOn(&g) == 0 {
				continue
			}
			buf[gi] -= d.Fraction
			growth := fragOf(buf, f.types) - before
			buf[gi] += d.Fraction
			if bn < 0 || growth < bestGrowth-1e-12 || (growth < bestGrowth+1e-12 && g.Free < bestFree-1e-12) {
				bn, bg, bestGrowth, bestFree = ni, gi, growth, g.Free
			}
		}
	}
	return bn, bg, bn >= 0
}

// leastGrowthNode is FGD's choice of node for a whole-GPU gang that fits
// one node: taking its first free whole GPUs grows fragmentation least.
func (f *Frag) leastGrowthNode(c *policy.Capacity, d policy.Demand) int {
	best, bestGrowth := -1, 0.0
	var buf []float64
	for ni := range c.Nodes {
		n := &c.Nodes[ni]
		if n.WholeFree < d.Workers || nodeFit(n, d) < d.Workers {
			continue
		}
		buf = freeVector(c, ni, nil, buf)
		before := fragOf(buf, f.types)
		after := append([]float64(nil), buf...)
		sort.Float64s(after)
		taken := 0
		for k := len(after) - 1; k >= 0 && taken < d.Workers; k-- {
			after[k], taken = 0, taken+1
		}
		if g := fragOf(after, f.types) - before; best < 0 || g < bestGrowth-1e-12 {
			best, bestGrowth = ni, g
		}
	}
	return best
}
