package serve

import (
	"cmp"
	"slices"
	"time"
)

// Orloj batches by the probability of meeting deadlines. For each queued
// request it knows, from the distribution of a batch of one with its input
// and output lengths, p_alone (its chance if dispatched now) and its death
// time (the last dispatch time at which that chance is still MinProb).
// Requests already below MinProb are dropped. Candidate batches are built
// around each of the most urgent requests (the anchor), with the most urgent
// others whose lengths fit under the anchor's buckets, at every size up to
// MaxBatch. A candidate B, whose execution time T_B has the distribution of
// its key (size, longest input, longest output), scores
//
//	( Σ_{r∈B} P(T_B ≤ d_r − now)  −  Σ_{r∉B, death_r < now+E[T_B]} p_alone_r ) / E[T_B]
//
// expected requests met, less those that waiting for B would cost, per second
// of worker time. The best positive candidate is dispatched.
type Orloj struct{ c PolicyConfig }

func (*Orloj) Name() string { return "orloj" }

type orlojReq struct {
	idx   int
	pOne  float64
	death time.Time
}

func (o *Orloj) Decide(now time.Time, q []Item, d *Dists, wantBatch bool) Decision {
	var dec Decision
	live := make([]orlojReq, 0, len(q))
	for i := range q {
		r, ok := o.assess(now, q[i], i, d)
		if !ok {
			dec.Drop = append(dec.Drop, i)
			continue
		}
		live = append(live, r)
	}
	if !wantBatch || len(live) == 0 {
		return dec
	}
	dec.Batch = o.best(now, q, live, d)
	return dec
}

// assess computes p_alone and the death time; ok is false for a request to
// drop. Without any distribution the request is kept (p = 1).
func (o *Orloj) assess(now time.Time, it Item, i int, d *Dists) (orlojReq, bool) {
	slack := it.Deadline.Sub(now)
	if slack < 0 {
		return orlojReq{}, false
	}
	s := d.Lookup(KeyFor(1, it.In, it.Out))
	if s == nil {
		return orlojReq{idx: i, pOne: 1, death: it.Deadline}, true
	}
	p := s.CDF(slack)
	if p < o.c.MinProb {
		return orlojReq{}, false
	}
	return orlojReq{idx: i, pOne: p, death: it.Deadline.Add(-s.Quantile(o.c.MinProb))}, true
}

// best returns the queue indexes of the highest-scoring candidate batch.
func (o *Orloj) best(now time.Time, q []Item, live []orlojReq, d *Dists) []int {
	slices.SortFunc(live, func(a, b orlojReq) int {
		if c := q[a.idx].Deadline.Compare(q[b.idx].Deadline); c != 0 {
			return c
		}
		return cmp.Compare(q[a.idx].Seq, q[b.idx].Seq)
	})
	lost := newLossIndex(live)
	var bestB []int
	bestScore := 0.0
	seen := map[Key]bool{}
	for a := 0; a < min(o.c.Anchors, len(live)); a++ {
		anchor := q[live[a].idx]
		cap := KeyFor(1, anchor.In, anchor.Out)
		if seen[cap] {
			continue // same buckets as an earlier, more urgent anchor
		}
		seen[cap] = true
		members := o.fitting(q, live, a, cap)
		b, score := o.bestSize(now, q, members, lost, d)
		if score > bestScore || bestB == nil {
			bestB, bestScore = b, score
		}
	}
	return bestB
}

// fitting lists the anchor then, by urgency, the live requests whose
// buckets fit under cap, up to MaxBatch of them.
func (o *Orloj) fitting(q []Item, live []orlojReq, anchor int, cap Key) []orlojReq {
	out := []orlojReq{live[anchor]}
	for i, r := range live {
		if len(out) == o.c.MaxBatch {
			break
		}
		it := q[r.idx]
		if i != anchor && bucket(it.In) <= cap.In && bucket(it.Out) <= cap.Out {
			out = append(out, r)
		}
	}
	return out
}

// bestSize scores each prefix of members and returns the best one.
func (o *Orloj) bestSize(now time.Time, q []Item, members []orlojReq, lost lossIndex, d *Dists) ([]int, float64) {
	var best []int
	bestScore := 0.0
	maxIn, maxOut := 0, 0
	for n := 1; n <= len(members); n++ {
		it := q[members[n-1].idx]
		maxIn, maxOut = max(maxIn, it.In), max(maxOut, it.Out)
		s := d.Lookup(KeyFor(n, maxIn, maxOut))
		if s == nil {
			if n == 1 { // nothing known yet: learn from a batch of one
				return []int{members[0].idx}, 1
			}
			continue
		}
		mean := max(s.Mean(), time.Microsecond)
		met, inB := 0.0, 0.0
		for _, r := range members[:n] {
			met += s.CDF(q[r.idx].Deadline.Sub(now))
			if r.death.Before(now.Add(mean)) {
				inB += r.pOne // counted in lost below, but it is served
			}
		}
		score := (met - (lost.before(now.Add(mean)) - inB)) / mean.Seconds()
		if best == nil || score > bestScore {
			best, bestScore = indexes(members[:n]), score
		}
	}
	return best, bestScore
}

func indexes(rs []orlojReq) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.idx
	}
	return out
}

// lossIndex answers "how much p_alone dies before t" in O(log n).
type lossIndex struct {
	deaths []time.Time
	cum    []float64 // cum[i] = Σ pOne of deaths[:i]
}

func newLossIndex(live []orlojReq) lossIndex {
	rs := slices.Clone(live)
	slices.SortFunc(rs, func(a, b orlojReq) int { return a.death.Compare(b.death) })
	li := lossIndex{deaths: make([]time.Time, len(rs)), cum: make([]float64, len(rs)+1)}
	for i, r := range rs {
		li.deaths[i] = r.death
		li.cum[i+1] = li.cum[i] + r.pOne
	}
	return li
}

func (l lossIndex) before(t time.Time) float64 {
	i, _ := slices.BinarySearchFunc(l.deaths, t, func(a, b time.Time) int { return a.Compare(b) })
	return l.cum[i]
}
