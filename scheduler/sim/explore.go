package sim

import (
	"fmt"
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

// PairExplorer is a pair predictor that learns from the run (e.g.
// colocate.ExplorePairs): the simulator reports each co-location as it
// begins, a probe's measured slowdowns when its window ends or the pair
// parts, and the end of every decision. A probe over the bound at its
// window's end sends the newer job back to the queue (a preemption that
// loses the probe's progress plus RestartCost of work), so no pair stays
// above the bound past a probe window.
type PairExplorer interface {
	// Shared: a (resident) and b (newcomer) began sharing a GPU; a
	// window > 0 makes it a probe judged that many seconds later.
	Shared(a, b *policy.Job) (window float64)
	// Measured reports a probe's slowdowns; true means over the bound.
	Measured(a, b *policy.Job, sa, sb float64) (over bool)
	// Settle ends a decision.
	Settle()
	// RestartCost is the work an evicted newcomer repeats (seconds).
	RestartCost() float64
}

// explorerOf finds the PairExplorer of a Framework's placer, if any.
func explorerOf(p policy.Policy) PairExplorer {
	if u, ok := p.(interface{ Unwrap() policy.Policy }); ok {
		return explorerOf(u.Unwrap())
	}
	f, ok := p.(*policy.Framework)
	if !ok {
		return nil
	}
	pp, ok := f.Place.(interface{ PairPredictor() place.PairPredictor })
	if !ok {
		return nil
	}
	ex, _ := pp.PairPredictor().(PairExplorer)
	return ex
}

// share is one pair of jobs on one GPU, as the explorer sees it.
type share struct {
	res, nu    *simJob // resident and newcomer (started later)
	start, end float64 // end: a probe's window end (+Inf: no probe)
	work       float64 // the newcomer's remaining work when it joined
	sa, sb     float64 // measured slowdowns (0: unmeasured pair)
	over, live bool
	open       bool // a probe not judged yet
}

// syncShares ends shares whose pair parted (judging an open probe) and
// begins those a decision created.
func (e *engine) syncShares() {
	if e.ex == nil {
		return
	}
	for _, s := range e.shares {
		s.live = false
	}
	var fresh []*share
	for ni := range e.led.gpus {
		for gi := range e.led.gpus[ni] {
			jobs := e.led.gpus[ni][gi].jobs
			if len(jobs) != 2 {
				continue
			}
			if s := e.shareOf(jobs[0], jobs[1]); s != nil {
				s.live = true
				continue
			}
			fresh = append(fresh, e.newShare(jobs[0], jobs[1]))
		}
	}
	kept := e.shares[:0]
	for _, s := range e.shares {
		if s.live {
			kept = append(kept, s)
			continue
		}
		e.part(s)
	}
	e.shares = append(kept, fresh...)
}

func (e *engine) shareOf(a, b *simJob) *share {
	for _, s := range e.shares {
		if (s.res == a && s.nu == b) || (s.res == b && s.nu == a) {
			return s
		}
	}
	return nil
}

// newShare begins a co-location: the later-started job is the newcomer.
func (e *engine) newShare(a, b *simJob) *share {
	if b.pj.LastStart < a.pj.LastStart || (b.pj.LastStart == a.pj.LastStart && b.pj.ID < a.pj.ID) {
		a, b = b, a
	}
	s := &share{res: a, nu: b, start: e.now, end: math.Inf(1), work: b.remaining, live: true}
	if e.cfg.Pairs != nil && a.spec.PairType != "" && b.spec.PairType != "" {
		s.sa, s.sb, _ = e.cfg.Pairs.Slowdowns(a.spec.PairType, b.spec.PairType)
	}
	s.over = e.overBound(s.sa, s.sb)
	c := &e.res.Colocations
	if w := e.ex.Shared(&a.pj, &b.pj); w > 0 {
		s.end, s.open = e.now+w, true
		c.Probes++
		if s.over {
			c.ProbesOver++
		}
	} else if s.over {
		c.SustainedOver++
	}
	return s
}

// overBound reports slowdowns above the simulator's bound (Config.Pairs').
func (e *engine) overBound(sa, sb float64) bool {
	bp, ok := e.cfg.Pairs.(boundedPairs)
	return ok && bp.Bound() > 0 && max(sa, sb) > bp.Bound()+1e-9
}

// part ends a share whose jobs no longer share: an open probe is judged
// (nobody to evict) and its time over the bound counted.
func (e *engine) part(s *share) {
	if !s.open {
		return
	}
	e.ex.Measured(&s.res.pj, &s.nu.pj, s.sa, s.sb)
	if s.over {
		e.res.Colocations.ProbeOverSeconds += e.now - s.start
	}
}

// nextProbeEnd is when the first open probe's window ends (+Inf: none).
func (e *engine) nextProbeEnd() float64 {
	t := math.Inf(1)
	for _, s := range e.shares {
		if s.open {
			t = min(t, s.end)
		}
	}
	return t
}

// endProbes judges probes whose window has ended: over the bound, the
// newcomer goes back to the queue. It reports whether any was evicted.
func (e *engine) endProbes() bool {
	if e.ex == nil {
		return false
	}
	e.syncShares() // pairs parted by completions at this instant
	evicted := false
	kept := e.shares[:0]
	for _, s := range e.shares {
		if !s.open || s.end > e.now {
			kept = append(kept, s)
			continue
		}
		s.open = false
		if !e.ex.Measured(&s.res.pj, &s.nu.pj, s.sa, s.sb) {
			if s.over { // the explorer kept a pair the simulator's bound rejects
				e.res.Colocations.SustainedOver++
			}
			kept = append(kept, s)
			continue
		}
		if s.over {
			e.res.Colocations.ProbeOverSeconds += e.now - s.start
		}
		e.evict(s.nu, s.work)
		evicted = true
	}
	e.shares = kept
	return evicted
}

// evict preempts j back to the queue with the work it had when it joined
// plus the explorer's restart cost: a probe's progress is lost.
func (e *engine) evict(j *simJob, work float64) {
	e.stop(j)
	j.pj.Preemptions++
	j.resumePenalty = true
	j.remaining = work + e.ex.RestartCost()
	e.res.Colocations.Evictions++
}

// checkShares is the exploration invariant: every pair sharing a GPU
// above the simulator's bound is a probe still inside its window.
func (e *engine) checkShares() error {
	if e.ex == nil {
		return nil
	}
	for ni := range e.led.gpus {
		for gi := range e.led.gpus[ni] {
			jobs := e.led.gpus[ni][gi].jobs
			if len(jobs) != 2 {
				continue
			}
			s := e.shareOf(jobs[0], jobs[1])
			if s == nil {
				return fmt.Errorf("jobs %s and %s share a GPU the explorer was not told of", jobs[0].pj.ID, jobs[1].pj.ID)
			}
			if s.over && !(s.open && e.now <= s.end) {
				return fmt.Errorf("jobs %s and %s share a GPU above the bound (%.2f, %.2f) outside a probe window", s.res.pj.ID, s.nu.pj.ID, s.sa, s.sb)
			}
		}
	}
	return nil
}
