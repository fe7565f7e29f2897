package policy

// A lazy trial counts what its victims add to the placer's fit count
// (FitTotaler: the placer fails exactly when the GPUs together host
// fewer of the gang's workers than it has), so it knows, victim by
// victim, the first prefix of victims with which the gang fits: the
// fewest the doubling batches and their bisection (preempt_fewest.go)
// find, without testing. 2D-Gittins' trials released ~500 victims each
// to preempt about one (their shares turn a GPU whole only hundreds
// deep), tested the placer at every doubling batch and bisected the
// batch that fitted, ~6 placements a trial, giving back and releasing
// victims at each bisection step: ~300 trials a decision at 10,000
// nodes, ~12 ms of its CPU.
//
// The decisions are the same. A batch test the count says fails would
// fail (the placer's word), so it is skipped; where the victims share
// GPUs, the bisection would end at the first fitting prefix (fitting is
// monotone in the victims released: the count only grows), so the gang
// is placed there at once, on the Capacity the bisection would have left
// (every share dyadic: the lazy terms). Where every victim so far holds
// whole GPUs the batch is kept released as before (preempt_fewest.go's
// header), so the trial goes on to the batch's test.

// fitJumpsOff turns the counted prefix off (tests compare decisions
// with and without it).
var fitJumpsOff bool

// countFits has the lazy trial count the fit d's workers gain with its
// victims out, from the Capacity's count now: where the placer totals
// its fits (FitTotaler), and the trial is lazy.
func (r *round) countFits(d Demand) {
	lz := r.lz
	if lz == nil {
		return
	}
	lz.count, lz.gain = false, 0
	if t := r.failed.totals; t != nil && !fitJumpsOff {
		lz.count, lz.need = true, d.Workers-t.FitTotal(r.cap, d)
	}
}

// fits reports that the gang fits by the count with every victim so far
// released (false where the trial does not count).
func (lz *lazyTrial) fits() bool { return lz != nil && lz.count && lz.gain >= lz.need }

// counted reports that the trial knows the gang's fit by its count.
func (lz *lazyTrial) counted() bool { return lz != nil && lz.count }

// fitOf is how many of the gang's workers load l's GPU hosts with the
// victims so far out, where the trial counts (0 otherwise: a victim's
// load and unload take it before and after, and add the difference to
// gain).
func (lz *lazyTrial) fitOf(l *lazyLoad) int {
	if !lz.count {
		return 0
	}
	v := lz.freed(l)
	return lz.d.FitsOn(&v)
}

// commitFit places the gang with the first fit victims released, the
// fewest with which it fits by the count (every later one given back),
// and commits it, keeping preempted the victims it uses. false where
// the placement fails or the Capacity rejects it: the victims are then
// released again, as the trial had them.
func (r *round) commitFit(j *Job, d Demand, victims []int, fit int) (Placement, bool) {
	r.releasedTo(victims, len(victims), fit)
	r.f.stats.Narrowed += len(victims) - fit
	p, ok := r.placeTest(j, d)
	if ok && r.cap.commitPlaced(j, p, r.f.util(j)) == nil {
		r.settle(j, p, victims[:fit])
		r.keepRefs(j, p, victims[:fit])
		return p, true
	}
	r.releasedTo(victims, fit, len(victims))
	return Placement{}, false
}

// fitNow commits the gang with the first fit victims released where the
// trial's batch test would be reached (not where the victims run out
// first) and the trial would bisect to them: it is lazy, and shortOf
// passes with them out. It returns the gang's placement and the batch's
// victims (victims extended to the test, none of them released).
func (r *round) fitNow(j *Job, d Demand, victims []int, k, i, batch, fit int) (Placement, []int, bool) {
	if r.lz == nil || r.lz.short() {
		return Placement{}, nil, false
	}
	n := len(victims)
	all, reached := r.batchEnd(victims, k, i, batch)
	if !reached {
		return Placement{}, nil, false
	}
	p, ok := r.commitFit(j, d, all[:n], fit)
	if ok {
		r.f.stats.Fitted++
	}
	return p, all, ok
}

// batchEnd lists the victims tryVictims would release from position k
// (the last of victims) to its batch's test, and reports whether that
// test is reached: the batch completes, or the victim at the test is the
// last one ranked below i by r.running (as tryVictims tests), not one
// after which only preempted or unplaced victims remain.
func (r *round) batchEnd(victims []int, k, i, batch int) ([]int, bool) {
	for len(victims) < batch && k > 0 && r.running[k-1] > i {
		for {
			if k = r.live(k - 1); k < 0 || r.running[k] <= i {
				return victims, false
			}
			if len(r.victimRefs(k).refs) > 0 {
				break
			}
		}
		victims = append(victims, k)
	}
	return victims, true
}
