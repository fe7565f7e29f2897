package order

import (
	"math"
	"slices"
)

// ServiceDist is an empirical distribution of job service (GPU-seconds),
// seeded from prior samples and grown online with finished jobs.
//
// 2D-Gittins asks it for sums of the samples above a point after every
// completion, and a flat prefix-sum array had to be re-summed from the
// inserted sample on (O(samples) per completion, a quarter of a whole
// Philly replay). Samples are instead kept in buckets by value (the
// exponent and the top four mantissa bits: 16 per doubling), each with its
// own suffix sums and the count and sum of every higher bucket, so an
// insertion costs its bucket's size plus the number of buckets below it.
//
// Every sum is accumulated from the largest sample down, so the index at
// attained service a depends (bit for bit) only on the samples above a: a
// completion shorter than a job's attained service leaves that job's index
// unchanged, which lets 2D-Gittins keep it (MaxAddedSince).
type ServiceDist struct {
	buckets []distBucket // ascending by key
	// first[k-key0] is the index of the first bucket whose key is ≥ k,
	// for keys from the lowest bucket's to the highest's: a lookup
	// instead of a search (a replay asks ~10⁸ times)
	first []int32
	key0  uint64
	n     int
	// added counts insertions; maxAdded[i] is the largest sample of
	// insertions i.., kept as a short log of (count, value) steps.
	added int
	log   []addedAt
}

type addedAt struct {
	at int     // insertions before this one
	v  float64 // the sample
}

// distBucket holds the samples whose bucketKey is key.
type distBucket struct {
	key uint64
	xs  []float64 // sorted
	// suf[i] is the sum of xs[i:], from the top; suf[len(xs)] = 0
	suf []float64
	// above and nAbove: sum (from the top) and count of all higher buckets
	above  float64
	nAbove int
}

// bucketKey orders positive finite floats as their values do.
func bucketKey(v float64) uint64 { return math.Float64bits(v) >> 46 }

// NewServiceDist keeps the positive, finite samples.
func NewServiceDist(samples []float64) *ServiceDist {
	d := &ServiceDist{}
	for _, v := range samples {
		d.insert(v)
	}
	for b := range d.buckets {
		d.buckets[b].resum()
	}
	d.restack(len(d.buckets) - 1)
	return d
}

// insert places v in its bucket without updating any sum; it returns the
// bucket's index, or -1 if v is not a usable sample.
func (d *ServiceDist) insert(v float64) int {
	if !(v > 0) || math.IsInf(v, 0) {
		return -1
	}
	k := bucketKey(v)
	b, found := slices.BinarySearchFunc(d.buckets, k, func(x distBucket, k uint64) int { return cmpU64(x.key, k) })
	if !found {
		d.buckets = slices.Insert(d.buckets, b, distBucket{key: k})
		d.reindex()
	}
	x := &d.buckets[b]
	x.xs = slices.Insert(x.xs, upper(x.xs, v), v)
	d.n++
	return b
}

// reindex rebuilds first after a bucket was created.
func (d *ServiceDist) reindex() {
	lo, hi := d.buckets[0].key, d.buckets[len(d.buckets)-1].key
	d.key0, d.first = lo, grow(d.first, int(hi-lo)+1)
	b := 0
	for k := range d.first {
		for d.buckets[b].key < lo+uint64(k) {
			b++
		}
		d.first[k] = int32(b)
	}
}

// Add inserts one observed service time.
func (d *ServiceDist) Add(v float64) {
	b := d.insert(v)
	if b < 0 {
		return
	}
	d.buckets[b].resum()
	d.restack(b)
	d.added++
	d.log = append(d.log, addedAt{at: d.added - 1, v: v})
	if len(d.log) > 64 { // callers ask about the last few insertions
		d.log = append(d.log[:0], d.log[len(d.log)-32:]...)
	}
}

// Added is how many samples Add has inserted (a version number).
func (d *ServiceDist) Added() int { return d.added }

// MaxAddedSince is the largest sample Add inserted after the first
// `since` insertions, -Inf if none, +Inf if that is no longer known.
func (d *ServiceDist) MaxAddedSince(since int) float64 {
	m := math.Inf(-1)
	if since >= d.added {
		return m
	}
	if len(d.log) == 0 || d.log[0].at > since {
		return math.Inf(1)
	}
	for i := len(d.log) - 1; i >= 0 && d.log[i].at >= since; i-- {
		m = max(m, d.log[i].v)
	}
	return m
}

// resum recomputes a bucket's suffix sums, from its largest sample down.
func (x *distBucket) resum() {
	x.suf = slices.Grow(x.suf[:0], len(x.xs)+1)[:len(x.xs)+1]
	s := 0.0
	x.suf[len(x.xs)] = 0
	for i := len(x.xs) - 1; i >= 0; i-- {
		s += x.xs[i]
		x.suf[i] = s
	}
}

// restack recomputes the higher-bucket sums and counts of buckets b..0.
func (d *ServiceDist) restack(b int) {
	if b < 0 {
		return
	}
	above, n := 0.0, 0
	if b+1 < len(d.buckets) {
		x := &d.buckets[b+1]
		above, n = x.above+x.suf[0], x.nAbove+len(x.xs)
	}
	for ; b >= 0; b-- {
		x := &d.buckets[b]
		x.above, x.nAbove = above, n
		above, n = above+x.suf[0], n+len(x.xs)
	}
}

// Len is the number of samples.
func (d *ServiceDist) Len() int { return d.n }

// overNext is the count and sum (from the top) of the samples greater
// than v, and the smallest sample greater than v (+Inf if none): it
// returns the same count and sum for every w in [v, next), bit for bit,
// until a sample above w is added.
func (d *ServiceDist) overNext(v float64) (int, float64, float64) {
	if len(d.buckets) == 0 {
		return 0, 0, math.Inf(1)
	}
	k, b := bucketKey(max(v, 0)), 0
	switch {
	case k > d.buckets[len(d.buckets)-1].key || v != v:
		return 0, 0, math.Inf(1)
	case k > d.key0:
		b = int(d.first[k-d.key0])
	}
	x := &d.buckets[b]
	i := 0
	if x.key == k {
		i = upper(x.xs, v)
	}
	next := math.Inf(1)
	switch {
	case i < len(x.xs):
		next = x.xs[i]
	case b+1 < len(d.buckets):
		next = d.buckets[b+1].xs[0]
	}
	return x.nAbove + len(x.xs) - i, x.above + x.suf[i], next
}

// gittinsSpan is what the Gittins index at service a is made of, and the
// span of services it stays valid for (see Gittins).
type gittinsSpan struct {
	a             float64 // computed at
	alive, later  int
	above, aboveQ float64
	next, nextQ   float64 // smallest samples above a and above a+delta
}

// span gathers the index's terms at a.
func (d *ServiceDist) span(a, delta float64) gittinsSpan {
	sp := gittinsSpan{a: a}
	sp.alive, sp.above, sp.next = d.overNext(a)
	sp.later, sp.aboveQ, sp.nextQ = d.overNext(a + delta)
	return sp
}

// covers reports whether the terms at sp.a are those at b ≥ sp.a: no
// sample lies in (sp.a, b] nor in (sp.a+delta, b+delta]. The caller
// guarantees no sample above b was added since span.
func (sp *gittinsSpan) covers(b, delta float64) bool {
	return b >= sp.a && b < sp.next && b+delta < sp.nextQ
}

// index is the Gittins index at service a from the terms of a span that
// covers a, computed exactly as Gittins does.
func (sp *gittinsSpan) index(a, delta float64) float64 {
	alive, later := sp.alive, sp.later
	if alive == 0 || delta <= 0 {
		return 0
	}
	done := float64(alive - later)
	spent := (sp.above - sp.aboveQ) - a*done + delta*float64(later)
	return (done / float64(alive)) / (spent / float64(alive))
}

// Gittins is the Gittins index of a job that has attained service a, for
// a service quantum delta:
//
//	G(a) = P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a]
//
// the chance of finishing within the next quantum per unit of expected
// service spent on it. Past the largest sample it is 0, as in Tiresias.
func (d *ServiceDist) Gittins(a, delta float64) float64 {
	sp := d.span(a, delta)
	return sp.index(a, delta)
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
