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
	if len(o) == 0 { // the first worker of a gang: nothing taken yet
		return g
	}
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

// touches reports whether the gang took anything on node ni. Placers ask
// for every node they skip, so the empty overlay must not start a map
// iteration.
func (o overlay) touches(ni int) bool {
	if len(o) == 0 {
		return false
	}
	for k := range o {
		if k[0] == ni {
			return true
		}
	}
	return false
}

// has reports whether the gang took anything on GPU gi of node ni.
func (o overlay) has(ni, gi int) bool {
	_, ok := o[[2]int{ni, gi}]
	return ok
}
