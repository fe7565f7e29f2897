package order

import (
	"math"
	"sort"
)

// ServiceDist is an empirical distribution of job service (GPU-seconds),
// seeded from prior samples and grown online with finished jobs.
type ServiceDist struct {
	sorted []float64
	prefix []float64 // prefix[i] = sum of sorted[:i]; rebuilt lazily
	dirty  bool
	// from is the lowest index inserted at since prefix was last valid:
	// entries up to it still are, so only the tail is summed again.
	from int
}

// NewServiceDist keeps the positive, finite samples.
func NewServiceDist(samples []float64) *ServiceDist {
	d := &ServiceDist{}
	for _, v := range samples {
		d.add(v)
	}
	sort.Float64s(d.sorted)
	d.dirty = true
	return d
}

func (d *ServiceDist) add(v float64) bool {
	if !(v > 0) || math.IsInf(v, 0) {
		return false
	}
	d.sorted = append(d.sorted, v)
	return true
}

// Add inserts one observed service time.
func (d *ServiceDist) Add(v float64) {
	if !d.add(v) {
		return
	}
	i := sort.SearchFloat64s(d.sorted[:len(d.sorted)-1], v)
	copy(d.sorted[i+1:], d.sorted[i:len(d.sorted)-1])
	d.sorted[i] = v
	if !d.dirty || i < d.from {
		d.from = i
	}
	d.dirty = true
}

// Len is the number of samples.
func (d *ServiceDist) Len() int { return len(d.sorted) }

func (d *ServiceDist) sums() []float64 {
	n := len(d.sorted)
	if !d.dirty && len(d.prefix) == n+1 {
		return d.prefix
	}
	from := 0
	if len(d.prefix) > 0 && d.from < len(d.prefix) {
		from = d.from // prefix[:from+1] sums samples that did not move
	}
	for len(d.prefix) < n+1 {
		d.prefix = append(d.prefix, 0)
	}
	d.prefix = d.prefix[:n+1]
	for i := from; i < n; i++ {
		d.prefix[i+1] = d.prefix[i] + d.sorted[i]
	}
	d.dirty = false
	return d.prefix
}

// Gittins is the Gittins index of a job that has attained service a, for
// a service quantum delta:
//
//	G(a) = P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a]
//
// the chance of finishing within the next quantum per unit of expected
// service spent on it. Past the largest sample it is 0, as in Tiresias.
func (d *ServiceDist) Gittins(a, delta float64) float64 {
	n := len(d.sorted)
	lo := upper(d.sorted, a)
	if lo == n || delta <= 0 {
		return 0
	}
	hi := lo + gallop(d.sorted[lo:], a+delta)
	p := d.sums()
	alive := float64(n - lo)
	done := float64(hi - lo)
	spent := (p[hi] - p[lo]) - a*done + delta*float64(n-hi)
	return (done / alive) / (spent / alive)
}

// upper is the index of the first x in sorted greater than v (len if
// none). It is called twice per ranked job, so it avoids sort.Search's
// closure.
func upper(sorted []float64, v float64) int {
	lo, hi := 0, len(sorted)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if sorted[m] > v {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// gallop is upper for a value expected near the start of sorted: it
// doubles a bound first, so a quantum spanning few samples costs a few
// steps instead of a search over the whole distribution.
func gallop(sorted []float64, v float64) int {
	end := 1
	for end < len(sorted) && sorted[end-1] <= v {
		end *= 2
	}
	end = min(end, len(sorted))
	start := end / 2
	return start + upper(sorted[start:end], v)
}
