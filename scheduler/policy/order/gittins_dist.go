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
	d.dirty = true
}

// Len is the number of samples.
func (d *ServiceDist) Len() int { return len(d.sorted) }

func (d *ServiceDist) sums() []float64 {
	if d.dirty || len(d.prefix) != len(d.sorted)+1 {
		d.prefix = make([]float64, len(d.sorted)+1)
		for i, v := range d.sorted {
			d.prefix[i+1] = d.prefix[i] + v
		}
		d.dirty = false
	}
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
	hi := lo + upper(d.sorted[lo:], a+delta)
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
