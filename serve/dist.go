package serve

import (
	"math/bits"
	"slices"
	"time"
)

// Key identifies one execution-time distribution: a batch of Batch requests
// padded to the longest input (In) and output (Out). Each field is a bucket,
// a power of two rounded up (0 stays 0), so a handful of keys cover a trace.
type Key struct {
	Batch, In, Out int
}

// bucket rounds n up to a power of two (0 and negatives give 0).
func bucket(n int) int {
	if n <= 0 {
		return 0
	}
	if n&(n-1) == 0 {
		return n
	}
	return 1 << bits.Len(uint(n))
}

// KeyFor is the distribution key of a batch of n requests whose longest
// input is in tokens and longest output out tokens.
func KeyFor(n, in, out int) Key {
	return Key{Batch: bucket(n), In: bucket(in), Out: bucket(out)}
}

// Sample is an empirical distribution: the last Window observations.
type Sample struct {
	ring   []time.Duration
	next   int
	sorted []time.Duration // cache, nil when stale
}

func newSample(window int) *Sample { return &Sample{ring: make([]time.Duration, 0, window)} }

func (s *Sample) add(d time.Duration) {
	if len(s.ring) < cap(s.ring) {
		s.ring = append(s.ring, d)
	} else {
		s.ring[s.next] = d
		s.next = (s.next + 1) % len(s.ring)
	}
	s.sorted = nil
}

func (s *Sample) sortedView() []time.Duration {
	if s.sorted == nil {
		s.sorted = slices.Clone(s.ring)
		slices.Sort(s.sorted)
	}
	return s.sorted
}

// Len is the number of observations held.
func (s *Sample) Len() int { return len(s.ring) }

// CDF is P(T <= d): the fraction of observations at most d.
func (s *Sample) CDF(d time.Duration) float64 {
	v := s.sortedView()
	if len(v) == 0 {
		return 0
	}
	i, found := slices.BinarySearch(v, d)
	for found && i < len(v) && v[i] == d {
		i++
	}
	return float64(i) / float64(len(v))
}

// Quantile is the smallest observation x with P(T <= x) >= q.
func (s *Sample) Quantile(q float64) time.Duration {
	v := s.sortedView()
	if len(v) == 0 {
		return 0
	}
	i := int(q*float64(len(v))+0.999999) - 1
	return v[max(0, min(i, len(v)-1))]
}

// Mean is the average observation.
func (s *Sample) Mean() time.Duration {
	if len(s.ring) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range s.ring {
		sum += d
	}
	return sum / time.Duration(len(s.ring))
}

// Dists holds one model's execution-time distributions, by Key and by batch
// size alone (the latter is what a Clockwork-style policy sees). Not safe for
// concurrent use: one goroutine (a model's dispatch loop, or the simulator)
// owns it, observing and deciding in turn.
type Dists struct {
	window  int
	byKey   map[Key]*Sample
	byBatch map[int]*Sample
	// borrowed memoises Lookup's search for keys without observations;
	// it is cleared when a key gets its first observation.
	borrowed map[Key]*Sample
}

// NewDists makes empty distributions that keep the last window observations
// per key (default 64).
func NewDists(window int) *Dists {
	if window <= 0 {
		window = 64
	}
	return &Dists{window: window, byKey: map[Key]*Sample{}, byBatch: map[int]*Sample{}, borrowed: map[Key]*Sample{}}
}

// Observe records one measured batch latency.
func (d *Dists) Observe(k Key, lat time.Duration) {
	s := d.byKey[k]
	if s == nil {
		s = newSample(d.window)
		d.byKey[k] = s
		clear(d.borrowed)
	}
	s.add(lat)
	b := d.byBatch[k.Batch]
	if b == nil {
		b = newSample(d.window)
		d.byBatch[k.Batch] = b
	}
	b.add(lat)
}

// Lookup returns the distribution for k. Without observations for k it
// borrows the nearest key that dominates it (every field >= k's: a batch at
// least as big and as long, so the estimate errs late, never early), then the
// nearest dominated one; nil when the model has no observations at all.
func (d *Dists) Lookup(k Key) *Sample {
	if s := d.byKey[k]; s != nil {
		return s
	}
	if s, ok := d.borrowed[k]; ok {
		return s
	}
	var best *Sample
	var bestKey Key
	bestCost, bestUp := 0, false
	for c, s := range d.byKey {
		up := c.Batch >= k.Batch && c.In >= k.In && c.Out >= k.Out
		cost := distance(c, k)
		better := best == nil || (up && !bestUp) ||
			(up == bestUp && (cost < bestCost || cost == bestCost && keyLess(c, bestKey)))
		if better { // ties go to the smaller key: map order must not decide
			best, bestKey, bestCost, bestUp = s, c, cost, up
		}
	}
	if best != nil {
		d.borrowed[k] = best
	}
	return best
}

// ByBatch is the distribution of every batch of (bucketed) size n, whatever
// its inputs, borrowing the nearest larger size, then smaller, when empty.
func (d *Dists) ByBatch(n int) *Sample {
	n = bucket(n)
	if s := d.byBatch[n]; s != nil {
		return s
	}
	for b := n * 2; b <= 1<<12; b *= 2 {
		if s := d.byBatch[b]; s != nil {
			return s
		}
	}
	for b := n / 2; b >= 1; b /= 2 {
		if s := d.byBatch[b]; s != nil {
			return s
		}
	}
	return nil
}

func keyLess(a, b Key) bool {
	if a.Batch != b.Batch {
		return a.Batch < b.Batch
	}
	if a.In != b.In {
		return a.In < b.In
	}
	return a.Out < b.Out
}

// distance counts bucket steps between two keys (log2 scale).
func distance(a, b Key) int {
	return steps(a.Batch, b.Batch) + steps(a.In, b.In) + steps(a.Out, b.Out)
}

func steps(a, b int) int {
	la, lb := bits.Len(uint(a)), bits.Len(uint(b))
	if la > lb {
		return la - lb
	}
	return lb - la
}
