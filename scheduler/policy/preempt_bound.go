package policy

import (
	"slices"
	"sync/atomic"
)

// DemandMonotone is implemented by placers whose failures carry over to
// harder demands: if Place fails for demand a on a Capacity (whatever the
// job), it fails for every b with Harder(a, b) on that Capacity and on
// any Capacity with no more free on any GPU (no more Free, FreeMem and
// whole GPUs). Such a placer must not read GPU Util (see roundTrips).
// The Framework then learns, across shapes, which preemption trials
// cannot succeed.
type DemandMonotone interface {
	Harder(a, b Demand) bool
}

// failedBoundOff turns the bound off, and boundSkips counts the trials
// it skipped (tests compare decisions with and without it).
var (
	failedBoundOff bool
	boundSkips     atomic.Int64
)

// maxFailed bounds the failed demands a round remembers.
const maxFailed = 32

// failedTrials is what a round learned from preemption trials that failed
// with every victim ranked below their job released: each such demand
// did not fit a capacity that every later-ranked job's trial can only
// reach less of (see shapeMemo.hopeless), so a harder demand ranked later
// cannot fit either. A churned srtf-oracle round ran ~22 such trials,
// each releasing and re-committing ~1,400 victims, most of them for a
// demand harder than one already failed.
//
// Whole-GPU gangs need no placer's word: shortOf fails a gang of more
// workers than there are whole free GPUs, and whole is the fewest whole
// free GPUs a complete failure saw with its victims released (-1: none
// yet), which a later trial cannot exceed either.
type failedTrials struct {
	on bool // the placer is DemandMonotone (and no residents are tracked)
	by DemandMonotone
	// counts: the placer is a FitCounter too; hits and misses count the
	// trials counting skipped and did not; totals: it says its total
	// (FitTotaler)
	counts       bool
	totals       FitTotaler
	hits, misses int
	ds           []Demand
	// whole as above; released is WholeFree as the trial just run
	// failed, with every victim it released still out (-1: no such)
	whole, released int
	// clean: the trial just run ended on a test that failed for lack of
	// room (shortOf or the placer's reason), not on a placement the
	// Capacity rejected; only such failures are remembered
	clean bool
}

// initFailed turns the memory on for a placer that declares it (and
// charges no utilisation, so a trial's re-commits can restore every GPU
// bit for bit: see roundTrips).
func (r *round) initFailed() {
	dm, ok := r.f.Place.(DemandMonotone)
	_, util := r.f.Place.(UtilPredictor)
	fc, counts := r.f.Place.(FitCounter)
	counts = counts && fc.CountsFits()
	var totals FitTotaler
	if counts {
		totals, _ = r.f.Place.(FitTotaler)
	}
	r.failed = failedTrials{on: ok && !util && r.preemptive && !r.f.tracksResidents() && !failedBoundOff, by: dm,
		ds: r.failed.ds[:0], whole: -1, counts: counts, totals: totals}
}

// futile reports that the trial for d at rank i need not run: it must
// fail with every victim released, and running it would only release and
// re-commit its victims, leaving the capacity bit for bit as it is
// (roundTrips). It must fail when d is harder than a demand whose trial
// did (DemandMonotone), or is a whole-GPU gang of more workers than whole
// GPUs such a trial freed or its own victims would free, or (FitCounter)
// when releasing the victims lets the GPUs host fewer workers of d than
// it has: d's placement has just failed for lack of room, so they host
// fewer than d.Workers now; with the victims out, no more than now (no
// GPU hosts one more) or, for a FitTotaler, than now plus what they add.
// placeFail is that placement's failure.
//
// Victims holding more than maxHeldCounted GPUs are read only for a job
// whose trial failed with every victim out in the last round (or was
// found futile): a giant gang of 80,001 slots that never fits released
// and re-committed a running giant every round.
func (r *round) futile(i int, d Demand, placeFail *failure) bool {
	ft := &r.failed
	if !ft.on {
		return false
	}
	dominated := ft.whole >= 0 && d.WholeGPU() && d.Workers > ft.whole || ft.covers(d)
	counted := (ft.counts && placeFail.room || d.WholeGPU()) && (ft.misses < minMisses || ft.misses < 4*ft.hits)
	big := r.held.sumFrom(i+1) > maxHeldCounted
	if !dominated && !counted || r.victimsBelow(i) > maxCounted || big && !r.f.failedBig.last(r.job(i).ID) ||
		!r.roundTrips(i, false) {
		return false
	}
	if !dominated {
		fails, whole := r.failsReleased(d, placeFail)
		if !fails && r.trip.i != i { // r.loads were an earlier rank's (more victims): read this one's
			if !r.roundTrips(i, true) {
				return false
			}
			fails, whole = r.failsReleased(d, placeFail)
		}
		if !fails {
			ft.misses++
			return false
		}
		ft.hits++
		ft.clean, ft.released = true, whole // as the trial would have failed
		ft.note(d)
	}
	if big {
		r.f.failedBig.note(r.job(i).ID)
	}
	boundSkips.Add(1)
	return true
}

// failsReleased reports that d cannot place with the victims r.loads
// holds released: a whole-GPU gang of more workers than whole GPUs then
// (shortOf, whatever the placer), or (FitCounter, after a failure for lack
// of room) no GPU hosting one more worker than now, or (FitTotaler) the
// GPUs hosting fewer than d.Workers with what the victims add; whole is
// the whole GPUs then.
func (r *round) failsReleased(d Demand, placeFail *failure) (fails bool, whole int) {
	gain, whole := r.gainOf(d)
	switch ft := &r.failed; {
	case d.WholeGPU() && whole < d.Workers:
		return true, whole
	case !ft.counts || !placeFail.room:
		return false, whole
	case gain == 0:
		return true, whole
	default:
		return ft.totals != nil && ft.totals.FitTotal(r.cap, d)+gain < d.Workers, whole
	}
}

// minMisses is how many counts that found a gain a round makes before it
// counts only while a fifth or more of them skip a trial (gittins' trials
// mostly succeed: the read was then pure cost).
const minMisses = 4

// maxCounted bounds the victims futile reads (roundTrips), and
// maxHeldCounted the GPU share they hold (their slots, at least): a trial
// that preempts one of tens of thousands of victims (LAS' time slices),
// or one 80,001-slot gang, costs less than reading them all.
const maxCounted = 2048

var maxHeldCounted = 2048.0

// victimsBelow is how many preemptable running jobs rank below i.
func (r *round) victimsBelow(i int) int {
	at, _ := slices.BinarySearch(r.running, i+1)
	return len(r.running) - at
}

// FitCounter is implemented by placers that fail exactly when the GPUs
// together host fewer than the gang's workers (Demand.FitsOn summed over
// every GPU of the Capacity below Workers), whatever the job.
type FitCounter interface {
	CountsFits() bool
}

// FitTotaler is a FitCounter that also says that sum: how many workers of
// d the Capacity's GPUs host together now. futile reads it, a large
// gang's trial tests by it, placing the gang once (trialTest), and a lazy
// trial counts on from it, victim by victim (preempt_fit.go). Its
// placement fails with a reason where the count is short.
type FitTotaler interface {
	FitTotal(c *Capacity, d Demand) int
}

// bigFailures is the jobs whose trials, with victims holding more than
// maxHeldCounted GPUs, failed with every victim out (or were found futile):
// this round's, and the last round's, which futile reads.
type bigFailures struct {
	prev, cur map[string]bool
}

// turn starts a round: this round's failures become the last round's.
func (b *bigFailures) turn() {
	b.prev, b.cur = b.cur, b.prev
	clear(b.cur)
}

// note records job id's failure in this round.
func (b *bigFailures) note(id string) {
	if b.cur == nil {
		b.cur = map[string]bool{}
	}
	b.cur[id] = true
}

// last reports that job id failed so in the last round.
func (b *bigFailures) last(id string) bool { return b.prev[id] }

// gainOf is how many more workers of d the GPUs roundTrips loaded would
// host with the victims released (their shares and memory added back, as
// exactly as the release would: roundTrips held), and how many GPUs would
// be whole then; at most that when r.loads are a lower rank's check.
func (r *round) gainOf(d Demand) (gain, whole int) {
	whole = r.cap.WholeFree()
	for _, l := range r.loads {
		if l.slots == 0 {
			continue // no victim of the rank on it (narrow)
		}
		g := *l.g
		before := d.FitsOn(&g)
		g.Free += l.frac
		g.FreeMem += l.mem
		gain += d.FitsOn(&g) - before
		if g.Whole() && !l.g.Whole() {
			whole++
		}
	}
	return gain, whole
}

// covers reports that d is harder than a remembered demand.
func (ft *failedTrials) covers(d Demand) bool {
	for _, a := range ft.ds {
		if ft.by.Harder(a, d) {
			return true
		}
	}
	return false
}

// note remembers d's complete, clean failure, dropping the demands it
// makes redundant (harder than d).
func (ft *failedTrials) note(d Demand) {
	if w := ft.released; w >= 0 && (ft.whole < 0 || w < ft.whole) {
		ft.whole = w
	}
	if !ft.on || !ft.clean || ft.covers(d) {
		return
	}
	keep := ft.ds[:0]
	for _, b := range ft.ds {
		if !ft.by.Harder(d, b) {
			keep = append(keep, b)
		}
	}
	ft.ds = keep
	if len(ft.ds) < maxFailed {
		ft.ds = append(ft.ds, d)
	}
}
