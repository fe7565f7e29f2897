package optimus

import (
	"container/heap"
	"math"
	"slices"
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// entry is what Optimus derived from the job at one position of the
// snapshot. Entries are kept by position from one decision to the next:
// on a tracked snapshot (Snapshot.JobGen) an unchanged job's entry is
// reused as it is, without reading the job.
type entry struct {
	job *policy.Job
	// est is read through estimated: a running job's only where needed
	est    estimate
	hasEst bool
	fit    *curveCache // the job's cached fit (fitFor), nil if none
	speed  *speedCache // the job's last speed fit, nil if none yet
	lo, hi int
	cur    int // workers now (running jobs), else 0
	frac   float64
	target int // workers allocated this round; 0 = not admitted
	// copies of the job's fields read in admission order, where each
	// job read was a cache miss at 100,000 jobs
	id  string
	mem int64
	run bool
	// accrues: a running job whose service grows without a new stamp
	// (policy.Accrual), so its estimate is recomputed every decision
	accrues bool
	pos     int // index in the snapshot's Jobs
	// text is the Waiting text kept from the last decision (keptText)
	text string
	// kind says whether the job is under allocation (active), cannot be
	// scheduled (invalid, for why), or neither (finished, nil)
	kind entryKind
	why  string
}

type entryKind uint8

const (
	inactive entryKind = iota
	active
	invalid
)

func (e *entry) running() bool { return e.run }

// collect validates active jobs against the cluster's limits lim and
// estimates them; it sets running jobs' targets to their minimum gang
// and sums those out of the gpus GPUs (o.run). On a tracked snapshot only
// the jobs whose stamp moved are read.
func (o *Optimus) collect(s *policy.Snapshot, lim policy.ClusterLimits, gpus int, dec *policy.Decision) []*entry {
	// a cluster with other limits may change whether a job can ever fit
	tracked := o.track.UpdateWithProgress(s) && o.limOK && lim == o.lim
	o.lim, o.limOK, o.tracked = lim, true, tracked
	slab := o.buf.slots(len(s.Jobs))
	if w := parWorkers(); w > 1 && len(s.Jobs) >= parMin {
		return o.collectPar(s, lim, gpus, dec, w)
	}
	out := o.buf.out[:0]
	fresh := o.queue.fresh[:0]
	rs := &o.run
	*rs = runs{budget: float64(gpus), minGrow: math.Inf(1), resize: rs.resize[:0]}
	for pos, j := range s.Jobs {
		e := &slab[pos]
		if tracked && o.track.Same(pos) {
			e.job, e.target = j, 0 // the pointer may differ (Snapshot.JobGen)
			e.hasEst = e.hasEst && !e.accrues
			if e.fit != nil {
				o.fitted++
			}
		} else {
			o.entryOf(lim, pos, j, e)
			if e.kind == active && !e.run {
				fresh = append(fresh, int32(pos))
			}
		}
		switch e.kind {
		case active:
			out = append(out, e)
			if e.run { // allocate keeps it at its minimum gang first
				e.target = e.lo
				rs.budget -= float64(e.lo) * e.frac
				if e.cur != e.lo {
					rs.resize = append(rs.resize, e)
				}
				if e.lo < e.hi {
					rs.minGrow = min(rs.minGrow, e.frac)
				}
			}
		case invalid:
			if !e.run {
				dec.Waiting = append(dec.Waiting, policy.Wait{JobID: e.id, Reason: e.why})
			}
		}
	}
	o.buf.out, o.queue.fresh = out, fresh
	return out
}

// entryOf fills e for j, listed at position pos of the snapshot, or
// says why j cannot be scheduled (kind invalid).
func (o *Optimus) entryOf(lim policy.ClusterLimits, pos int, j *policy.Job, e *entry) {
	o.entryPost(pos, j, e, o.entryPre(lim, pos, j, e))
}

// allocate sets each entry's target worker count within gpus GPUs,
// admitting queued entries in the given order.
func (o *Optimus) allocate(es []*entry, queue []qrec) {
	rs := &o.run
	budget, minGrow := rs.budget, rs.minGrow // running jobs' minimums (collect)
	at := o.admits.at[:0]
	for i := range queue {
		if r := &queue[i]; r.need <= budget+1e-9 {
			e := &o.buf.slab[r.pos]
			e.target, r.admit = e.lo, true
			at = append(at, int32(i))
			budget -= r.need
			if e.lo < e.hi {
				minGrow = min(minGrow, e.frac)
			}
		}
	}
	o.admits.at = at
	// A job whose next worker does not fit the spare GPUs never grows (the
	// budget only shrinks): when none fits, nothing grows, whatever the
	// gains, and no estimate is read. Under a long queue the admissions
	// leave less than any worker's share.
	rs.grown = minGrow <= budget+1e-9
	if rs.grown {
		o.growByGain(es, budget)
	}
	for _, e := range o.resized(es) {
		o.damp(e)
	}
}

// runs is what collect and allocate learn of the running jobs.
type runs struct {
	budget  float64 // GPUs left after every running job's minimum gang
	minGrow float64 // the least share a worker of an elastic job takes
	// resize are the running jobs whose size is not their minimum; grown:
	// growByGain ran, so any job's target may differ from its size
	resize []*entry
	grown  bool
}

// resized are the entries whose target may differ from their current
// size: every one if growByGain ran, else the running ones not at their
// minimum gang (the others' target is their size), in es's order.
func (o *Optimus) resized(es []*entry) []*entry {
	if o.run.grown {
		return es
	}
	return o.run.resize
}

// buffers keep a decision's entries and sort space for the next one: at
// 10,000 queued jobs they were megabytes of garbage per decision, and the
// GC pauses they caused set the p99.
type buffers struct {
	slab []entry // by snapshot position
	out  []*entry
	par  []parScratch // collectPar's workers
}

// slots sizes the slab, one entry per snapshot position, for n jobs,
// keeping the entries of the positions it had.
func (b *buffers) slots(n int) []entry {
	if n < len(b.slab) {
		clear(b.slab[n:]) // positions gone: drop their jobs
	}
	b.slab = slices.Grow(b.slab[:min(n, len(b.slab))], max(0, n-len(b.slab)))[:n]
	return b.slab
}

// growByGain hands out spare GPUs one worker at a time by marginal gain.
func (o *Optimus) growByGain(es []*entry, budget float64) {
	h := &gainHeap{}
	for i, e := range es {
		if e.target > 0 && e.target < e.hi {
			heap.Push(h, gainOf(e, o.estimated(e), i))
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
			heap.Push(h, gainOf(e, o.estimated(e), g.idx))
		}
	}
}

// damp keeps a running job's size unless resizing changes its estimated
// remaining time by at least ResizeMinGain (a resize costs a restart).
func (o *Optimus) damp(e *entry) {
	if !e.running() || e.target == e.cur || e.cur < e.lo || e.cur > e.hi {
		return
	}
	est := o.estimated(e)
	now, next := est.remaining(e.cur), est.remaining(e.target)
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

func gainOf(e *entry, est *estimate, i int) gain {
	return gain{perGPU: (est.remaining(e.target) - est.remaining(e.target+1)) / e.frac, idx: i}
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
