package serve

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"time"
)

// SimRequest is one request replayed by the simulator.
type SimRequest struct {
	At      time.Duration
	In, Out int
	SLO     time.Duration
}

// SimConfig is one simulated run: the same Policy and Dists code as the
// live front end, on virtual time, with workers whose batch latencies are
// drawn from an ExecModel measured on the real model.
type SimConfig struct {
	Policy   Policy
	Workers  int
	Exec     *ExecModel
	Features bool // false: the model's cost ignores lengths (static)
	Requests []SimRequest
	// Warm seeds the distributions (offline profiling, as Orloj and
	// Clockwork both do); the first Warmup requests are not counted.
	Warm   []ProfilePoint
	Warmup int
	// Overhead is added to every batch (front end to worker and back).
	Overhead time.Duration
	Seed     uint64
}

// SimResult are the counted requests' outcomes.
type SimResult struct {
	Policy                    string
	Requests, Met, Dropped    int // Dropped: answered early (or expired queued)
	Late                      int // served after the deadline: not met
	Attainment, Goodput       float64
	OfferedRate               float64 // requests/s
	P50, P99                  time.Duration
	Batches                   int
	MeanBatch                 float64
	DecisionMean, DecisionP99 time.Duration
}

type simReq struct {
	item    Item
	counted bool
}

type simBatch struct {
	at     time.Duration
	worker int
	reqs   []*simReq
	key    Key
	lat    time.Duration
}

type batchHeap []*simBatch

func (h batchHeap) Len() int           { return len(h) }
func (h batchHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h batchHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *batchHeap) Push(x any)        { *h = append(*h, x.(*simBatch)) }
func (h *batchHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type simState struct {
	cfg       SimConfig
	base      time.Time
	dists     *Dists
	rng       *rand.Rand
	queue     []*simReq
	idle      []bool
	inflight  batchHeap
	res       SimResult
	latencies []time.Duration
	decisions []time.Duration
	batchSum  int
}

// Simulate replays cfg.Requests (sorted by At) and reports.
func Simulate(cfg SimConfig) SimResult {
	s := &simState{cfg: cfg, base: time.Unix(0, 0), dists: NewDists(0), rng: rand.New(rand.NewPCG(cfg.Seed, 7)),
		idle: make([]bool, cfg.Workers)}
	for i := range s.idle {
		s.idle[i] = true
	}
	for _, p := range cfg.Warm {
		s.dists.Observe(s.key(p.Batch, p.In, p.Out), p.Latency)
	}
	ai := 0
	for ai < len(cfg.Requests) || len(s.inflight) > 0 {
		now := s.nextTime(ai)
		for len(s.inflight) > 0 && s.inflight[0].at <= now {
			s.complete(heap.Pop(&s.inflight).(*simBatch))
		}
		for ai < len(cfg.Requests) && cfg.Requests[ai].At <= now {
			r := cfg.Requests[ai]
			at := s.base.Add(r.At)
			s.queue = append(s.queue, &simReq{
				item:    Item{Seq: uint64(ai), Arrival: at, Deadline: at.Add(r.SLO), In: r.In, Out: r.Out},
				counted: ai >= cfg.Warmup,
			})
			ai++
		}
		s.schedule(now)
	}
	for _, r := range s.queue { // nothing left to serve them
		s.count(r, false, false, 0)
	}
	return s.result()
}

func (s *simState) nextTime(ai int) time.Duration {
	next := time.Duration(1<<62 - 1)
	if ai < len(s.cfg.Requests) {
		next = s.cfg.Requests[ai].At
	}
	if len(s.inflight) > 0 && s.inflight[0].at < next {
		next = s.inflight[0].at
	}
	return next
}

func (s *simState) key(n, in, out int) Key {
	if !s.cfg.Features {
		in, out = 0, 0
	}
	return KeyFor(n, in, out)
}

func (s *simState) schedule(now time.Duration) {
	t := s.base.Add(now)
	for len(s.queue) > 0 {
		w := slices.Index(s.idle, true)
		if w < 0 {
			return
		}
		items := make([]Item, len(s.queue))
		for i, r := range s.queue {
			items[i] = r.item
		}
		start := time.Now()
		dec := s.cfg.Policy.Decide(t, items, s.dists, true)
		s.decisions = append(s.decisions, time.Since(start))
		take := map[int]bool{}
		for _, i := range dec.Drop {
			take[i] = true
			s.count(s.queue[i], false, false, 0)
		}
		var batch []*simReq
		maxIn, maxOut := 0, 0
		for _, i := range dec.Batch {
			if !take[i] {
				take[i] = true
				r := s.queue[i]
				batch = append(batch, r)
				maxIn, maxOut = max(maxIn, r.item.In), max(maxOut, r.item.Out)
			}
		}
		s.queue = removeIdx(s.queue, take)
		if len(batch) == 0 {
			return
		}
		lat := s.cfg.Overhead + s.cfg.Exec.Sample(s.rng, len(batch), maxIn, maxOut)
		s.idle[w] = false
		s.res.Batches++
		s.batchSum += len(batch)
		heap.Push(&s.inflight, &simBatch{at: now + lat, worker: w, reqs: batch, key: s.key(len(batch), maxIn, maxOut), lat: lat})
	}
}

func (s *simState) complete(b *simBatch) {
	s.idle[b.worker] = true
	s.dists.Observe(b.key, b.lat)
	done := s.base.Add(b.at)
	for _, r := range b.reqs {
		met := !done.After(r.item.Deadline)
		s.count(r, met, !met, done.Sub(r.item.Arrival))
	}
}

func (s *simState) count(r *simReq, met, late bool, lat time.Duration) {
	if !r.counted {
		return
	}
	s.res.Requests++
	switch {
	case met:
		s.res.Met++
	case late:
		s.res.Late++
	default:
		s.res.Dropped++
	}
	if met || late {
		s.latencies = append(s.latencies, lat)
	}
}

func (s *simState) result() SimResult {
	r := s.res
	r.Policy = s.cfg.Policy.Name()
	reqs := s.cfg.Requests[min(s.cfg.Warmup, len(s.cfg.Requests)):]
	if r.Requests > 0 {
		r.Attainment = float64(r.Met) / float64(r.Requests)
	}
	if len(reqs) > 1 {
		span := (reqs[len(reqs)-1].At - reqs[0].At).Seconds()
		r.Goodput = float64(r.Met) / span
		r.OfferedRate = float64(len(reqs)) / span
	}
	r.P50, r.P99 = pct(s.latencies, 0.5), pct(s.latencies, 0.99)
	if r.Batches > 0 {
		r.MeanBatch = float64(s.batchSum) / float64(r.Batches)
	}
	var sum time.Duration
	for _, d := range s.decisions {
		sum += d
	}
	if len(s.decisions) > 0 {
		r.DecisionMean = sum / time.Duration(len(s.decisions))
	}
	r.DecisionP99 = pct(s.decisions, 0.99)
	return r
}

func pct(v []time.Duration, q float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[min(len(v)-1, int(q*float64(len(v))))]
}
