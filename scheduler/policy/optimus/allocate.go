package optimus

import (
	"container/heap"
	"slices"
	"sort"
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
)

// entry is one active job under allocation.
type entry struct {
	job    *policy.Job
	est    estimate
	lo, hi int
	cur    int // workers now (running jobs), else 0
	frac   float64
	target int // workers allocated this round; 0 = not admitted
	// copies of the job's fields read in admission order, where each
	// job read was a cache miss at 100,000 jobs
	id  string
	mem int64
	run bool
	pos int // index in the snapshot's Jobs
	// text is the Waiting text kept from the last decision (keptText)
	text string
}

func (e *entry) running() bool { return e.run }

// collect validates active jobs and estimates them.
func (o *Optimus) collect(s *policy.Snapshot, dec *policy.Decision) []*entry {
	out := o.buf.entries(len(s.Jobs))
	slab := o.buf.slab
	lim := policy.LimitsOf(&s.Cluster)
	for pos, j := range s.Jobs {
		if j == nil || (j.State != policy.Queued && j.State != policy.Running) {
			continue
		}
		e := &slab[len(out)]
		if why := o.entryOf(lim, pos, j, e); why != "" {
			if j.State == policy.Queued {
				dec.Waiting = append(dec.Waiting, policy.Wait{JobID: j.ID, Reason: why})
			}
			*e = entry{}
			continue
		}
		out = append(out, e)
	}
	o.buf.out = out
	return out
}

// entryOf fills e for j, listed at position pos of the snapshot, or explains why j cannot be scheduled.
func (o *Optimus) entryOf(lim policy.ClusterLimits, pos int, j *policy.Job, e *entry) string {
	lo, hi := j.Workers, j.Workers
	if j.MinWorkers > 0 {
		lo = j.MinWorkers
	}
	if j.MaxWorkers > 0 {
		hi = j.MaxWorkers
	}
	d, err := policy.DemandWith(j, lo)
	if err != nil {
		return "invalid request: " + err.Error()
	}
	if hi < lo {
		return "invalid request: job " + j.ID + ": MaxWorkers below MinWorkers"
	}
	if why := lim.Never(d); why != "" {
		return why
	}
	*e = entry{job: j, est: o.estimateAt(pos, j), lo: lo, hi: hi, cur: len(j.Placement.Slots), frac: d.Fraction,
		id: j.ID, mem: d.MemMiB, run: j.State == policy.Running, pos: pos}
	e.text = o.keptText(e)
	return ""
}

// allocate sets each entry's target worker count within gpus GPUs,
// admitting queued entries in the given order.
func (o *Optimus) allocate(es, queue []*entry, gpus int) {
	budget := float64(gpus)
	for _, e := range es {
		if e.running() {
			e.target = e.lo
			budget -= float64(e.lo) * e.frac
		}
	}
	for _, e := range queue {
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

// admissionOrder lists queued entries, least estimated GPU-time first,
// then by submit time and ID, keeping input order on full ties: the order
// of sort.Stable(byCost), computed by the orderings' radix sort on costs
// computed once per entry. NaN keys break any comparison order, so input
// with NaNs keeps the stable sort, whose result it defines.
func (b *buffers) admissionOrder(es []*entry) []*entry {
	q := byCost{es: b.q.es[:0], cost: b.q.cost[:0]}
	defer func() { b.q = q }()
	nan := false
	for _, e := range es {
		if !e.running() {
			c := e.est.remaining(e.lo) * float64(e.lo) * e.frac
			nan = nan || c != c || e.job.Submit != e.job.Submit
			q.es = append(q.es, e)
			q.cost = append(q.cost, c)
		}
	}
	if nan {
		sort.Stable(q)
		return q.es
	}
	b.jobs = b.jobs[:0]
	for _, e := range q.es {
		b.jobs = append(b.jobs, e.job)
	}
	pos := b.sorter.Sort(b.jobs, q.cost)
	b.order = slices.Grow(b.order[:0], len(pos))[:len(pos)]
	for i, p := range pos {
		b.order[i] = q.es[p]
	}
	return b.order
}

// buffers keep a decision's entries and sort space for the next one: at
// 10,000 queued jobs they were megabytes of garbage per decision, and the
// GC pauses they caused set the p99.
type buffers struct {
	slab   []entry
	out    []*entry
	q      byCost
	order  []*entry
	jobs   []*policy.Job
	sorter order.Sorter
}

// entries sizes the slab for n jobs and returns an empty entry list.
func (b *buffers) entries(n int) []*entry {
	b.slab = slices.Grow(b.slab[:0], n)[:n]
	clear(b.slab)
	b.out = b.out[:0]
	return b.out
}

// byCost sorts entries by admission cost, then submit time and ID.
type byCost struct {
	es   []*entry
	cost []float64
}

func (q byCost) Len() int { return len(q.es) }
func (q byCost) Swap(a, b int) {
	q.es[a], q.es[b] = q.es[b], q.es[a]
	q.cost[a], q.cost[b] = q.cost[b], q.cost[a]
}
func (q byCost) Less(a, b int) bool {
	if ca, cb := q.cost[a], q.cost[b]; ca != cb {
		return ca < cb
	}
	if q.es[a].job.Submit != q.es[b].job.Submit {
		return q.es[a].job.Submit < q.es[b].job.Submit
	}
	return q.es[a].job.ID < q.es[b].job.ID
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

// appendSecs appends v seconds rounded to whole seconds, e.g. "42 s".
func appendSecs(b []byte, v float64) []byte {
	return append(strconv.AppendFloat(b, v, 'f', 0, 64), " s"...)
}
