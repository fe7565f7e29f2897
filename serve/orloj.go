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
// Requests already below MinProb are dropped. Candidate batches: for the
// length buckets of each of the most urgent requests (the cap), and each
// batch-size bucket n up to MaxBatch, the n most urgent requests fitting
// under the cap that still have MinProb of finishing in such a batch (so a
// batch never carries a request it would make late). A candidate B, whose
// execution time T_B has the distribution of its key (size, longest input,
// longest output), scores
//
//	( Σ_{r∈B} P(T_B ≤ d_r − now)  −  Σ_{r∉B, death_r < now+E[T_B]} p_alone_r ) / E[T_B]
//
// expected requests met, less those that waiting for B would cost, per second
// of worker time. The best positive candidate is dispatched.
type Orloj struct {
	c PolicyConfig
	// scratch reused between decisions (a policy serves one model's queue)
	live, byDeath, fit []orlojReq
	loss               lossIndex
}

func (*Orloj) Name() string { return "orloj" }

type orlojReq struct {
	idx      int
	pOne     float64
	death    int64 // UnixNano; no pointers, so sorting needs no write barriers
	deadline int64 // UnixNano
	seq      uint64
}

func (o *Orloj) Decide(now time.Time, q []Item, d *Dists, wantBatch bool) Decision {
	var dec Decision
	live := o.live[:0]
	defer func() { o.live = live[:0] }()
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
	dl := it.Deadline.UnixNano()
	r := orlojReq{idx: i, pOne: 1, death: dl, deadline: dl, seq: it.Seq}
	if s == nil {
		return r, true
	}
	if r.pOne = s.CDF(slack); r.pOne < o.c.MinProb {
		return orlojReq{}, false
	}
	r.death = dl - int64(s.Quantile(o.c.MinProb))
	return r, true
}

// best returns the queue indexes of the highest-scoring candidate batch.
func (o *Orloj) best(now time.Time, q []Item, live []orlojReq, d *Dists) []int {
	slices.SortFunc(live, func(a, b orlojReq) int {
		if c := cmp.Compare(a.deadline, b.deadline); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	lost := o.lossIndex(live)
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
		b, score := o.bestSize(now, q, o.fitting(q, live, cap), cap, lost, d)
		if b != nil && (bestB == nil || score > bestScore) {
			bestB, bestScore = b, score
		}
	}
	return bestB
}

// fitting lists, by urgency, the live requests whose buckets fit under cap.
func (o *Orloj) fitting(q []Item, live []orlojReq, cap Key) []orlojReq {
	out := o.fit[:0]
	defer func() { o.fit = out[:0] }()
	for _, r := range live {
		it := q[r.idx]
		if bucket(it.In) <= cap.In && bucket(it.Out) <= cap.Out {
			out = append(out, r)
		}
	}
	return out
}

// bestSize tries each batch-size bucket n: the n most urgent fitting
// requests that still have MinProb of finishing in a batch of n padded to
// cap (they are a suffix of fit: fit is in deadline order), scored on the
// distribution of their actual key.
func (o *Orloj) bestSize(now time.Time, q []Item, fit []orlojReq, cap Key, lost lossIndex, d *Dists) ([]int, float64) {
	var best []int
	bestScore := 0.0
	for n := 1; n <= o.c.MaxBatch; n *= 2 {
		s := d.Lookup(KeyFor(n, cap.In, cap.Out))
		if s == nil {
			if n == 1 && len(fit) > 0 { // nothing known yet: learn from a batch of one
				return []int{fit[0].idx}, 0
			}
			break
		}
		ready := now.Add(s.Quantile(o.c.MinProb))
		j, _ := slices.BinarySearchFunc(fit, ready, func(r orlojReq, t time.Time) int {
			return q[r.idx].Deadline.Compare(t)
		})
		members := fit[j:min(len(fit), j+n)]
		if len(members) == 0 {
			break // a bigger batch is slower: nobody fits it either
		}
		score := o.score(now, q, members, lost, d)
		if best == nil || score > bestScore {
			best, bestScore = indexes(members), score
		}
		if len(members) < n {
			break
		}
	}
	return best, bestScore
}

// score is expected requests met in B, less those its run lets die, per
// second of expected worker time.
func (o *Orloj) score(now time.Time, q []Item, members []orlojReq, lost lossIndex, d *Dists) float64 {
	maxIn, maxOut := 0, 0
	for _, r := range members {
		maxIn, maxOut = max(maxIn, q[r.idx].In), max(maxOut, q[r.idx].Out)
	}
	s := d.Lookup(KeyFor(len(members), maxIn, maxOut))
	mean := max(s.Mean(), time.Microsecond)
	end := now.Add(mean).UnixNano()
	met, inB := 0.0, 0.0
	for _, r := range members {
		met += s.CDF(q[r.idx].Deadline.Sub(now))
		if r.death < end {
			inB += r.pOne // counted in lost below, but it is served
		}
	}
	return (met - (lost.before(end) - inB)) / mean.Seconds()
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
	deaths []int64
	cum    []float64 // cum[i] = Σ pOne of deaths[:i]
}

// lossIndex orders live by death time, reusing the policy's buffers.
func (o *Orloj) lossIndex(live []orlojReq) lossIndex {
	rs := append(o.byDeath[:0], live...)
	slices.SortFunc(rs, func(a, b orlojReq) int { return cmp.Compare(a.death, b.death) })
	li := lossIndex{deaths: o.loss.deaths[:0], cum: append(o.loss.cum[:0], 0)}
	for _, r := range rs {
		li.deaths = append(li.deaths, r.death)
		li.cum = append(li.cum, li.cum[len(li.cum)-1]+r.pOne)
	}
	o.byDeath, o.loss = rs[:0], li
	return li
}

func (l lossIndex) before(t int64) float64 {
	i, _ := slices.BinarySearch(l.deaths, t)
	return l.cum[i]
}
