package optimus

import (
	"container/heap"
	"sort"
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// entry is one active job under allocation.
type entry struct {
	job    *policy.Job
	est    estimate
	lo, hi int
	cur    int // workers now (running jobs), else 0
	frac   float64
	target int // workers allocated this round; 0 = not admitted
}

func (e *entry) running() bool { return e.job.State == policy.Running }

// collect validates active jobs and estimates them.
func (o *Optimus) collect(s *policy.Snapshot, dec *policy.Decision) []*entry {
	var out []*entry
	lim := policy.LimitsOf(&s.Cluster)
	for _, j := range s.Jobs {
		if j == nil || (j.State != policy.Queued && j.State != policy.Running) {
			continue
		}
		e, why := o.entryOf(lim, j)
		if why != "" {
			if j.State == policy.Queued {
				dec.Waiting[j.ID] = why
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

func (o *Optimus) entryOf(lim policy.ClusterLimits, j *policy.Job) (*entry, string) {
	lo, hi := j.Workers, j.Workers
	if j.MinWorkers > 0 {
		lo = j.MinWorkers
	}
	if j.MaxWorkers > 0 {
		hi = j.MaxWorkers
	}
	d, err := policy.DemandWith(j, lo)
	if err != nil {
		return nil, "invalid request: " + err.Error()
	}
	if hi < lo {
		return nil, "invalid request: job " + j.ID + ": MaxWorkers below MinWorkers"
	}
	if why := lim.Never(d); why != "" {
		return nil, why
	}
	return &entry{job: j, est: o.estimateOf(j), lo: lo, hi: hi, cur: len(j.Placement.Slots), frac: d.Fraction}, ""
}

// allocate sets each entry's target worker count within gpus GPUs.
func (o *Optimus) allocate(es []*entry, gpus int) {
	budget := float64(gpus)
	for _, e := range es {
		if e.running() {
			e.target = e.lo
			budget -= float64(e.lo) * e.frac
		}
	}
	for _, e := range admissionOrder(es) {
		if need := float64(e.lo) * e.frac; need <= budget+1e-9 {
			e.target = e.lo
			budget -= need
		}
	}
	o.growByGain(es, budget)
	for _, e := range es {
		o.damp(e)
	}
}

// admissionOrder lists queued entries, least estimated GPU-time first.
func admissionOrder(es []*entry) []*entry {
	var q []*entry
	for _, e := range es {
		if !e.running() {
			q = append(q, e)
		}
	}
	cost := func(e *entry) float64 { return e.est.remaining(e.lo) * float64(e.lo) * e.frac }
	sort.SliceStable(q, func(a, b int) bool {
		ca, cb := cost(q[a]), cost(q[b])
		if ca != cb {
			return ca < cb
		}
		if q[a].job.Submit != q[b].job.Submit {
			return q[a].job.Submit < q[b].job.Submit
		}
		return q[a].job.ID < q[b].job.ID
	})
	return q
}

// growByGain hands out spare GPUs one worker at a time by marginal gain.
func (o *Optimus) growByGain(es []*entry, budget float64) {
	h := &gainHeap{}
	for i, e := range es {
		if e.target > 0 && e.target < e.hi {
			heap.Push(h, gainOf(e, i))
		}
	}
	for h.Len() > 0 {
		g := heap.Pop(h).(gain)
		e := es[g.idx]
		if g.perGPU <= 0 || e.frac > budget+1e-9 {
			continue
		}
		e.target++
		budget -= e.frac
		if e.target < e.hi {
			heap.Push(h, gainOf(e, g.idx))
		}
	}
}

// damp keeps a running job's size unless resizing changes its estimated
// remaining time by at least ResizeMinGain (a resize costs a restart).
func (o *Optimus) damp(e *entry) {
	if !e.running() || e.target == e.cur || e.cur < e.lo || e.cur > e.hi {
		return
	}
	now, next := e.est.remaining(e.cur), e.est.remaining(e.target)
	if now <= 0 || abs(now-next) < o.cfg.ResizeMinGain*now {
		e.target = e.cur
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

type gain struct {
	perGPU float64
	idx    int
}

func gainOf(e *entry, i int) gain {
	return gain{perGPU: (e.est.remaining(e.target) - e.est.remaining(e.target+1)) / e.frac, idx: i}
}

// gainHeap pops the largest gain; ties go to the earlier entry.
type gainHeap []gain

func (h gainHeap) Len() int { return len(h) }
func (h gainHeap) Less(a, b int) bool {
	if h[a].perGPU != h[b].perGPU {
		return h[a].perGPU > h[b].perGPU
	}
	return h[a].idx < h[b].idx
}
func (h gainHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *gainHeap) Push(x any)   { *h = append(*h, x.(gain)) }
func (h *gainHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func secs(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + " s" }
