package policy

// A trial's doubling batches overshoot: the batch that lets the gang fit
// releases up to twice the victims it needs, and the placer may then use
// the GPUs of any of them, not those of the lowest-ranked. Where victims
// share GPUs that picked a higher-ranked victim while lower ones kept
// running, and the victim, outranking them, preempted one of them in the
// next round to start again: at 10,000 nodes srtf-oracle preempted and
// restarted ~27 jobs a round, one priority level further down each round,
// for as long as jobs arrived. Where a victim shares a GPU, tryVictims
// keeps the fewest victims, lowest rank first, with which the gang fits,
// so a victim is preempted only where every job ranked below it could
// not make room. Where every victim holds whole GPUs the batch stays
// released: the placer's choice among them is a node set (consolidation,
// measured network speed), whole-GPU victims did not cascade (the Philly
// replays preempt as often either way), and the rule would cost those
// placements (network-aware under 2D-LAS, 0.94× consolidated's average
// JCT with the batch, 1.03× with the fewest).

// fewest bisects between lo victims, a test that failed, and all of
// victims, with which the gang fits: it leaves released the fewest
// victims with which the gang fits (every placement test of fewer
// failed), sets *p to the gang's placement with them and returns their
// count. Fitting is taken as monotone in the victims released (more free
// capacity), as the doubling batches take it.
//
// counted: the tests are the placer's fit count (countTest), and the
// gang is placed once, at the end, with the fewest victims out (an
// 80,001-slot gang had been placed at the batch's test and again at
// each step that fitted, ~1.8 ms each). Otherwise each test places it,
// and *p holds the batch's placement on entry.
//
// Where the last test failed, the end state is reached a second time,
// after some victims were given back and released again. A test's
// placement was made on the first visit, a counted one on the second,
// the state it is committed on. The two are the same bit for bit where
// the round trips are exact (dyadic shares and free values, as lazy
// trials require). ok is false where the counted placement fails (a
// placer whose count and placement disagree).
func (r *round) fewest(j *Job, d Demand, victims []int, lo int, counted bool, p *Placement) (n int, ok bool) {
	hi := len(victims)
	at := hi // victims released now
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		r.releasedTo(victims, at, mid)
		at = mid
		if r.fitsWith(j, d, counted, p) {
			hi = mid
		} else {
			lo = mid
		}
	}
	r.releasedTo(victims, at, hi)
	r.f.stats.Narrowed += len(victims) - hi
	if r.lz != nil {
		r.lz.flush(r.cap, false) // what the placer sees at hi
	}
	if counted {
		q, fits := r.placeTest(j, d)
		if !fits {
			return hi, false
		}
		*p = q
	}
	return hi, true
}

// roomFor is a test's first check with the victims now released (the
// lazy trial's short, else shortOf); where it passes, a lazy trial's
// pending victims are flushed for the placer to see.
func (r *round) roomFor(d Demand) bool {
	if r.lz != nil {
		if r.lz.short() {
			return false
		}
		r.lz.flush(r.cap, false)
		return true
	}
	return shortOf(d, r.cap) == ""
}

// fitsWith is a bisection's test with the victims now released: the fit
// count where counted, else a placement (kept in *p where it fits).
func (r *round) fitsWith(j *Job, d Demand, counted bool, p *Placement) bool {
	if counted {
		return r.roomFor(d) && r.countTest(d) == ""
	}
	q, ok := r.placeTest(j, d)
	if ok {
		*p = q
	}
	return ok
}

// placeTest is a trial's placement test with the victims now released:
// the gang's placement, and whether it fits.
func (r *round) placeTest(j *Job, d Demand) (Placement, bool) {
	if !r.roomFor(d) {
		return Placement{}, false
	}
	p, bad := r.f.Place.Place(j, d, r.cap)
	r.f.stats.PlacerCalls++
	return p, bad == "" && len(p.Slots) == d.Workers
}

// releasedTo moves the trial from the first `from` of victims released to
// the first `to`: the later ones are given back (highest rank first), or
// the next ones released, as the trial released them before.
func (r *round) releasedTo(victims []int, from, to int) {
	st := &r.f.stats
	for x := from; x < to; x++ {
		vr := r.victimRefs(victims[x])
		st.Victims, st.VictimSlots = st.Victims+1, st.VictimSlots+len(vr.refs)
		if r.lz != nil && !r.lz.add(r.cap, x, vr) {
			r.lz.flush(r.cap, true) // not exact (cannot happen: it was added before)
			r.lz = nil
		}
		if r.lz == nil {
			r.release(victims[x])
		}
	}
	if to >= from {
		return
	}
	if r.lz == nil {
		for x := from - 1; x >= to; x-- {
			st.GivenBack++
			_ = r.recommit(victims[x]) // released by this trial: fits back
		}
		return
	}
	st.GivenBack += r.lz.truncate(to)
	r.lz.sync(r.cap)
}

// truncate takes the victims at index to and past out of the trial as if
// they had never been released: those materialised are put back (at the
// next sync), their shares leave their GPUs' sums, and the nodes they
// touched are relevant again only as their remaining loads make them.
// It returns how many it put back. Every share and sum is dyadic (the
// lazy terms), so taking a share off restores the sum before it bit for
// bit.
func (lz *lazyTrial) truncate(to int) int {
	back := 0
	for at := len(lz.spans) - 1; at >= to; at-- {
		if lz.out[at] {
			lz.putBack(at)
			back++
			lz.truncated++
		}
		v := lz.spans[at]
		for s := v.hi - 1; s >= v.lo; s-- {
			lz.unload(lz.held[s])
		}
	}
	keep := lz.pend[:0]
	for _, p := range lz.pend {
		if p.at < to {
			keep = append(keep, p)
		}
	}
	lz.pend = keep
	if to < len(lz.spans) {
		// each node once, after every unload (not once per slot: a
		// giant victim's 80,000 slots are on 10,000 nodes)
		lo := lz.spans[to].lo
		lz.pass++
		for s := lo; s < int32(len(lz.slots)); s++ {
			if nd := &lz.nodes[lz.slots[s]]; nd.rechecked != lz.pass {
				nd.rechecked = lz.pass
				lz.relevance(lz.slots[s])
			}
		}
		lz.slots, lz.held = lz.slots[:lo], lz.held[:lo]
		lz.spans, lz.out = lz.spans[:to], lz.out[:to]
	}
	if verifyTruncate != nil {
		verifyTruncate(lz)
	}
	return back
}

// verifyTruncate, set by tests, checks what truncate leaves.
var verifyTruncate func(*lazyTrial)

// unload takes a victim's slot off its GPU's sums and the shares added
// (dyadic: exact in any order); the GPU stops counting as turned whole
// if it no longer is.
func (lz *lazyTrial) unload(h lazySlot) {
	l := &lz.loads[h.load]
	before := lz.fitOf(l)
	l.frac -= h.frac
	l.mem -= h.mem
	lz.added -= h.frac
	lz.gain += lz.fitOf(l) - before
	if v := lz.freed(l); l.whole && !v.Whole() {
		l.whole, lz.turned = false, lz.turned-1
	}
}

// freed is what GPU load l's GPU holds free with its victims so far out.
func (lz *lazyTrial) freed(l *lazyLoad) FreeGPU {
	return FreeGPU{Free: l.free + l.frac, FreeMem: l.freeMem + l.mem, TotalMem: l.g.TotalMem}
}

// relevance recomputes whether node record ni is relevant: it was at
// first sight, or a GPU of it is whole with the victims now out, or hosts
// a worker of a fractional gang (load's rule: both only grow with
// releases, so now is as good as ever).
func (lz *lazyTrial) relevance(ni int32) {
	nd := &lz.nodes[ni]
	rel := nd.host0
	for e := nd.head; e >= 0 && !rel; e = lz.loads[e].next {
		v := lz.freed(&lz.loads[e])
		rel = lz.shows(&v)
	}
	nd.relevant = rel
}

// countTestsOff makes trials place the gang at every test, as before
// countTest (tests compare decisions with and without it).
var countTestsOff bool

// countMinWorkers is the smallest gang whose trials test by count: a
// small gang places in microseconds, and where the placer would stop at
// the first node that fits it exactly, a count scans every node.
var countMinWorkers = 1024

// trialTest is tryVictims' test with the victims now released (their
// shortOf or lazy check passed). Where fewest will bisect (a victim
// shares a GPU, and more than one was released since the last test),
// the gang is large (countMinWorkers) and the placer fails exactly when
// its fit count is short (FitCounter with a FitTotaler), the count
// answers and fewest places the gang once (counted); otherwise the
// placer places it.
func (r *round) trialTest(j *Job, d Demand, bisects bool) (p Placement, bad string, counted bool) {
	if bisects && d.Workers >= countMinWorkers && r.failed.totals != nil && !countTestsOff { // totals: a FitCounter's (initFailed)
		return Placement{}, r.countTest(d), true
	}
	p, bad = r.f.Place.Place(j, d, r.cap)
	r.f.stats.PlacerCalls++
	return p, bad, false
}

// countTest is "" where the GPUs together host d's workers by the
// placer's count (the placement would succeed), a reason otherwise.
// The caller has checked shortOf (or the lazy trial's short) and
// flushed a lazy trial's pending victims.
func (r *round) countTest(d Demand) string {
	r.f.stats.Counted++
	if r.failed.totals.FitTotal(r.cap, d) < d.Workers {
		return "too few workers fit"
	}
	return ""
}
