package order

import (
	"math"
	"sort"
)

// ServiceDist is an empirical distribution of job service (GPU-seconds),
// seeded from prior samples and grown online with finished jobs.
type ServiceDist struct {
	sorted []float64
	// prefix[i] = sum of sorted[:i], valid for i ≤ valid and extended
	// lazily to what a query needs: an insertion at i keeps prefix[:i+1],
	// and most queries (small attained service) read only the first few.
	prefix []float64
	valid  int
}

// NewServiceDist keeps the positive, finite samples.
func NewServiceDist(samples []float64) *ServiceDist {
	d := &ServiceDist{}
	for _, v := range samples {
		d.add(v)
	}
	sort.Float64s(d.sorted)
	d.prefix = []float64{0}
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
	d.valid = min(d.valid, i)
}

// Len is the number of samples.
func (d *ServiceDist) Len() int { return len(d.sorted) }

// sums returns prefix sums valid at least up to index upTo (≤ Len),
// each computed by the same running sum whenever it is extended, so the
// values do not depend on how lazily they were.
func (d *ServiceDist) sums(upTo int) []float64 {
	if len(d.prefix) < len(d.sorted)+1 {
		d.prefix = append(d.prefix, make([]float64, len(d.sorted)+1-len(d.prefix))...)
	}
	for ; d.valid < upTo; d.valid++ {
		d.prefix[d.valid+1] = d.prefix[d.valid] + d.sorted[d.valid]
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
	hi := lo + gallop(d.sorted[lo:], a+delta)
	p := d.sums(hi)
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
