package optimus

import (
	"math"
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// estimate is what Optimus believes about one job.
type estimate struct {
	steps float64 // remaining steps
	speed Speed
	how   string // which estimate was used, for Waiting messages
}

// remaining is the estimated time to finish with w workers.
func (e estimate) remaining(w int) float64 { return e.steps * e.speed.StepTime(w) }

// curveCache refits a job's curve only when new progress arrives.
type curveCache struct {
	n     int
	last  policy.ProgressPoint
	curve Curve
	err   error
	// claim is collectPar's: the epoch of the last decision that
	// estimated from it (shifted left once), low bit set if two entries
	// did (estimates)
	claim uint64
}

// estimateOf picks, in order: steps to TargetLoss from the fitted curve;
// else the time left of OracleDuration (the trace's run length, standing
// in for the user's declared step budget) converted to steps at the job's
// requested size; else the heavy-tail guess "as long again as it has run",
// at least MinRemaining seconds.
func (o *Optimus) estimateOf(j *policy.Job) estimate { return o.estimateWith(o.fitFor(-1, j), j) }

// estimated is e's estimate, computed on first use: a running job's is
// read only where it may be resized (an elastic job's gain, damp), and
// refitting every running job's curve on every decision (each has a new
// progress point) was most of a decision at 100,000 jobs.
func (o *Optimus) estimated(e *entry) *estimate {
	if !e.hasEst {
		if len(e.job.StepTimes) > 1 { // FitSpeed solves an NNLS: keep it
			if e.speed == nil {
				e.speed = &speedCache{}
			}
			e.est, e.hasEst = o.estimateSpeed(e.fit, e.job, e.speed.of(e.job.StepTimes)), true
		} else {
			e.est, e.hasEst = o.estimateWith(e.fit, e.job), true
		}
	}
	return &e.est
}

// estimateWith is estimateOf of j, whose cached fit (fitFor) is c.
func (o *Optimus) estimateWith(c *curveCache, j *policy.Job) estimate {
	return o.estimateSpeed(c, j, FitSpeed(j.StepTimes))
}

// estimateSpeed is estimateWith, j's FitSpeed being sp.
func (o *Optimus) estimateSpeed(c *curveCache, j *policy.Job, sp Speed) estimate {
	cur := 0.0
	if n := len(j.Progress); n > 0 {
		cur = j.Progress[n-1].Step
	}
	if c != nil {
		if cv, err := c.curveOf(j); err == nil {
			if k, ok := cv.StepsTo(j.TargetLoss); ok {
				return estimate{steps: math.Max(0, k-cur), speed: sp, how: "fitted convergence"}
			}
		}
	}
	base := j.Workers
	if base <= 0 {
		base = 1
	}
	_, ex := j.ServiceAt(o.now)
	left := math.Max(ex, o.cfg.MinRemaining)
	how := "remaining ≈ executed"
	if j.OracleDuration > 0 {
		left, how = math.Max(0, j.OracleDuration-ex), "step budget"
	}
	return estimate{steps: left / sp.StepTime(base), speed: sp, how: how}
}

// fitFor is the cached fit of j, listed at position pos of the snapshot
// (-1: unknown), or nil if its estimate uses no curve (no TargetLoss, no
// progress). Every job given one counts in fitted, once per decision.
func (o *Optimus) fitFor(pos int, j *policy.Job) *curveCache {
	if j.TargetLoss <= 0 || len(j.Progress) == 0 {
		return nil
	}
	o.fitted++ // j has a cached fit from here on
	c := o.cellAt(pos, j.ID)
	if c == nil {
		c = &curveCache{} // n = 0: fitted on first use
		o.curves[j.ID] = c
		o.setCell(pos, j.ID, c)
	}
	return c
}

// curveOf is j's fitted curve, refitted only when its progress moved.
func (c *curveCache) curveOf(j *policy.Job) (Curve, error) {
	n := len(j.Progress)
	if c.n == n && c.last == j.Progress[n-1] {
		return c.curve, c.err
	}
	cv, err := FitCurve(j.Progress)
	c.n, c.last, c.curve, c.err = n, j.Progress[n-1], cv, err
	return cv, err
}

// setCell records that position pos holds job id with cached fit c.
func (o *Optimus) setCell(pos int, id string, c *curveCache) {
	if pos < 0 {
		return
	}
	if pos >= len(o.cells) {
		o.cells = slices.Grow(o.cells, pos+1-len(o.cells))[:pos+1]
	}
	o.cells[pos] = curveCell{id: id, c: c}
}

// curveCell remembers which job's cached fit a snapshot position held.
type curveCell struct {
	id string
	c  *curveCache
}

// cellAt is the cached fit of job id (nil if none), found by its position
// pos in the snapshot when the job was there last time: hashing every
// job's ID on every decision was a fifth of one at 100,000 jobs. A cell
// forget dropped is marked dead (n < 0) and found through the map again.
func (o *Optimus) cellAt(pos int, id string) *curveCache {
	if pos >= 0 && pos < len(o.cells) {
		if cl := o.cells[pos]; cl.c != nil && cl.c.n >= 0 && cl.id == id {
			return cl.c
		}
	}
	c := o.curves[id]
	if c != nil {
		o.setCell(pos, id, c)
	}
	return c
}
