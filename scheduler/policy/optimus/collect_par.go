package optimus

import (
	"math"
	"runtime"
	"sync/atomic"

	parts "github.com/caravan-dl/caravan/internal/split"
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// parMin is the fewest jobs collect splits over workers: below a few
// thousand the hand-off costs more than the pass (a variable for tests).
var parMin = 8192

// parWorkers is how many workers collect uses (a variable for tests).
var parWorkers = func() int { return runtime.GOMAXPROCS(0) }

// split runs f over w fixed ranges of [0, n) on w goroutines (the
// caller's included) and waits for them all.
func split(n, w int, f func(r, lo, hi int)) { parts.Run(n, w, w, f) }

// fitStep is what a position's entry still needs from collect's serial
// pass once entryPre filled it.
type fitStep uint8

const (
	fitNone fitStep = iota // no fit (no TargetLoss or no progress)
	// fitPrev: the fit kept at this position, whose entry had the same
	// job (same ID) last decision: it is alive (forget keeps every listed
	// job's, dropFit only a finished job's), so it is counted without
	// being read, which was a cache miss per running job that each
	// churned decision changes
	fitPrev
	fitFind // found or made through fitFor
	fitDrop // finished: its fit is dropped (dropFit)
	fitSkip // invalid, or a nil job: nothing more
)

// gang is a running entry's minimum gang: workers of frac GPUs each.
type gang struct{ workers, frac float64 }

// pending is a position whose fit the serial pass finds or drops.
type pending struct {
	pos  int32
	step fitStep
}

// parScratch is one worker's share of collectPar, kept for reuse.
type parScratch struct {
	out, resize []*entry
	// needs are the running entries' minimum gangs, in position order:
	// the budget is summed serially by the same expression as before
	// (so any fused multiply-subtract is the same too); minGrow is their
	// least elastic worker share (min is exact in any order)
	needs   []gang
	minGrow float64
	pend    []pending // fitFind and fitDrop positions
	fresh   []int32   // queued active entries rebuilt
	waits   []int32   // queued jobs that can never be scheduled
	late    []int32   // fresh entries whose fit another one shares
	fitted  int       // entries holding a fit kept from the last decision
}

// collectPar is collect on w workers over fixed ranges of positions,
// with the same result bit for bit. What entryOf derives from the job
// alone (its request, limits, whether it keeps its fit) is computed in
// parallel, each worker writing only its positions' entries. Finding
// and dropping fits (the map and cells) and everything collect appends
// or sums run after, serially in position order as before: the
// per-worker lists are concatenated in range order. Then the rebuilt
// queued entries are estimated (estimates), which reads no fit lookup's
// state: a fit's n only ever leaves 0 for a length, and dead stays dead.
func (o *Optimus) collectPar(s *policy.Snapshot, lim policy.ClusterLimits, gpus int, dec *policy.Decision, w int) []*entry {
	slab, tracked := o.buf.slab, o.tracked
	if len(o.buf.par) < w {
		o.buf.par = make([]parScratch, w)
	}
	ws := o.buf.par[:w]
	split(len(s.Jobs), w, func(r, lo, hi int) {
		p := &ws[r]
		p.out, p.resize, p.needs, p.minGrow = p.out[:0], p.resize[:0], p.needs[:0], math.Inf(1)
		p.pend, p.fresh, p.waits, p.fitted = p.pend[:0], p.fresh[:0], p.waits[:0], 0
		for pos := lo; pos < hi; pos++ {
			j, e := s.Jobs[pos], &slab[pos]
			if tracked && o.track.Same(pos) {
				e.job, e.target = j, 0
				e.hasEst = e.hasEst && !e.accrues
				if e.fit != nil {
					p.fitted++
				}
			} else {
				switch st := o.entryPre(lim, pos, j, e); st {
				case fitNone:
					e.fit = nil
				case fitPrev:
					p.fitted++
				case fitFind, fitDrop:
					p.pend = append(p.pend, pending{pos: int32(pos), step: st})
				}
				if e.kind == active && !e.run {
					p.fresh = append(p.fresh, int32(pos))
				}
			}
			switch e.kind {
			case active:
				p.out = append(p.out, e)
				if e.run { // allocate keeps it at its minimum gang first
					e.target = e.lo
					p.needs = append(p.needs, gang{float64(e.lo), e.frac})
					if e.cur != e.lo {
						p.resize = append(p.resize, e)
					}
					if e.lo < e.hi {
						p.minGrow = min(p.minGrow, e.frac)
					}
				}
			case invalid:
				if !e.run {
					p.waits = append(p.waits, int32(pos))
				}
			}
		}
	})
	out := o.buf.out[:0]
	fresh := o.queue.fresh[:0]
	rs := &o.run
	*rs = runs{budget: float64(gpus), minGrow: math.Inf(1), resize: rs.resize[:0]}
	for r := range ws {
		p := &ws[r]
		o.fitted += p.fitted
		for _, pd := range p.pend {
			if pd.step == fitDrop {
				o.dropFit(int(pd.pos), s.Jobs[pd.pos].ID)
			} else {
				slab[pd.pos].fit = o.fitFor(int(pd.pos), s.Jobs[pd.pos])
			}
		}
		fresh = append(fresh, p.fresh...)
		out = append(out, p.out...)
		for _, g := range p.needs {
			rs.budget -= g.workers * g.frac
		}
		rs.resize = append(rs.resize, p.resize...)
		rs.minGrow = min(rs.minGrow, p.minGrow)
		for _, pos := range p.waits {
			e := &slab[pos]
			dec.Waiting = append(dec.Waiting, policy.Wait{JobID: e.id, Reason: e.why})
		}
	}
	o.buf.out, o.queue.fresh = out, fresh
	o.estimates(fresh, w)
	return out
}

// estimates estimates the queued entries at the positions fresh (in
// position order) and finds their kept texts, as entryOf does. Each
// touches only its own entry, speed cache and fit, so they run on w
// workers, except entries sharing a fit (one job listed twice under one
// ID): a fit is refitted from the job that reads it, so those run after,
// serially in position order. Sharing is found by claiming each fit for
// this decision (an epoch in the fit) before any is read.
func (o *Optimus) estimates(fresh []int32, w int) {
	slab := o.buf.slab
	if len(fresh) < parMin {
		for _, pos := range fresh {
			e := &slab[pos]
			o.estimated(e)
			e.text = o.keptText(e)
		}
		return
	}
	o.epoch++
	ep := o.epoch << 1
	split(len(fresh), w, func(_, lo, hi int) {
		for _, pos := range fresh[lo:hi] {
			if c := slab[pos].fit; c != nil {
				c.claimFor(ep)
			}
		}
	})
	ws := o.buf.par[:w]
	split(len(fresh), w, func(r, lo, hi int) {
		late := ws[r].late[:0]
		for _, pos := range fresh[lo:hi] {
			e := &slab[pos]
			if c := e.fit; c != nil && atomic.LoadUint64(&c.claim) == ep|1 {
				late = append(late, pos)
				continue
			}
			o.estimated(e)
			e.text = o.keptText(e)
		}
		ws[r].late = late
	})
	for r := range ws {
		for _, pos := range ws[r].late {
			e := &slab[pos]
			o.estimated(e)
			e.text = o.keptText(e)
		}
	}
}

// claimFor marks c claimed in the decision whose epoch (shifted left
// once) is ep, and shared (the low bit) if it was claimed already.
func (c *curveCache) claimFor(ep uint64) {
	for {
		v := atomic.LoadUint64(&c.claim)
		switch {
		case v&^1 != ep:
			if atomic.CompareAndSwapUint64(&c.claim, v, ep) {
				return
			}
		case v&1 == 0:
			if atomic.CompareAndSwapUint64(&c.claim, v, v|1) {
				return
			}
		default:
			return
		}
	}
}

// entryPre is entryOf without what touches shared state: e gets
// everything but its fit (the one kept at pos stands in), and the step
// says what entryPost must still do.
func (o *Optimus) entryPre(lim policy.ClusterLimits, pos int, j *policy.Job, e *entry) fitStep {
	prevFit, prevSpeed := e.fit, e.speed // the last entry at pos: same job if same ID
	if e.kind != active || j == nil || e.id != j.ID {
		prevFit, prevSpeed = nil, nil
	}
	if j == nil || (j.State != policy.Queued && j.State != policy.Running) {
		*e = entry{}
		if j != nil {
			return fitDrop
		}
		return fitSkip
	}
	lo, hi := j.Workers, j.Workers
	if j.MinWorkers > 0 {
		lo = j.MinWorkers
	}
	if j.MaxWorkers > 0 {
		hi = j.MaxWorkers
	}
	d, err := policy.DemandWith(j, lo)
	why := ""
	switch {
	case err != nil:
		why = "invalid request: " + err.Error()
	case hi < lo:
		why = "invalid request: job " + j.ID + ": MaxWorkers below MinWorkers"
	default:
		why = lim.Never(d)
	}
	if why != "" {
		*e = entry{kind: invalid, id: j.ID, run: j.State == policy.Running, pos: pos, why: why}
		return fitSkip
	}
	*e = entry{kind: active, job: j, fit: prevFit, lo: lo, hi: hi, cur: len(j.Placement.Slots),
		frac: d.Fraction, id: j.ID, mem: d.MemMiB, run: j.State == policy.Running, pos: pos, speed: prevSpeed}
	e.accrues = j.Accrues()
	switch {
	case j.TargetLoss <= 0 || len(j.Progress) == 0:
		return fitNone
	case prevFit != nil:
		return fitPrev
	}
	return fitFind
}

// entryPost completes entryPre's entry e of j at pos as entryOf does
// (the fit kept or found, dropFit, a queued job's estimate and kept
// text); true for a queued active entry (collect's fresh).
func (o *Optimus) entryPost(pos int, j *policy.Job, e *entry, step fitStep) bool {
	switch step {
	case fitSkip:
		return false
	case fitDrop:
		o.dropFit(pos, j.ID)
		return false
	case fitNone:
		e.fit = nil
	case fitPrev:
		o.fitted++
	case fitFind:
		e.fit = o.fitFor(pos, j)
	}
	if e.run {
		return false
	}
	o.estimated(e) // queued: admission order reads every estimate
	e.text = o.keptText(e)
	return true
}
