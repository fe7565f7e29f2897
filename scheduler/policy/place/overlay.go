package place

import "github.com/caravan-dl/caravan/scheduler/policy"

// overlay records what a gang under construction already took from GPUs,
// so later workers of the same gang see it without touching the Capacity.
type overlay map[[2]int]delta

type delta struct {
	frac, util float64
	mem        int64
}

// view is GPU (ni, gi) as the gang under construction sees it.
func (o overlay) view(c *policy.Capacity, ni, gi int) policy.FreeGPU {
	g := c.Nodes[ni].GPUs[gi]
	if dl, ok := o[[2]int{ni, gi}]; ok {
		g.Free -= dl.frac
		g.FreeMem -= dl.mem
		g.Util += dl.util
	}
	return g
}

func (o overlay) take(_ *policy.Capacity, ni, gi int, frac float64, mem int64, util float64) {
	k := [2]int{ni, gi}
	dl := o[k]
	dl.frac += frac
	dl.mem += mem
	dl.util += util
	o[k] = dl
}

func (o overlay) touches(ni int) bool {
	for k := range o {
		if k[0] == ni {
			return true
		}
	}
	return false
}
