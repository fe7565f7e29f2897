package optimus

import (
	"math"

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
}

// estimateOf picks, in order: steps to TargetLoss from the fitted curve;
// else the time left of OracleDuration (the trace's run length, standing
// in for the user's declared step budget) converted to steps at the job's
// requested size; else the heavy-tail guess "as long again as it has run",
// at least MinRemaining seconds.
func (o *Optimus) estimateOf(j *policy.Job) estimate {
	sp := FitSpeed(j.StepTimes)
	cur := 0.0
	if n := len(j.Progress); n > 0 {
		cur = j.Progress[n-1].Step
	}
	if j.TargetLoss > 0 {
		if c, err := o.curve(j); err == nil {
			if k, ok := c.StepsTo(j.TargetLoss); ok {
				return estimate{steps: math.Max(0, k-cur), speed: sp, how: "fitted convergence"}
			}
		}
	}
	base := j.Workers
	if base <= 0 {
		base = 1
	}
	left := math.Max(j.Executed, o.cfg.MinRemaining)
	how := "remaining ≈ executed"
	if j.OracleDuration > 0 {
		left, how = math.Max(0, j.OracleDuration-j.Executed), "step budget"
	}
	return estimate{steps: left / sp.StepTime(base), speed: sp, how: how}
}

func (o *Optimus) curve(j *policy.Job) (Curve, error) {
	n := len(j.Progress)
	if n == 0 {
		return Curve{}, errNoProgress
	}
	o.fitted++ // j has a cached fit from here on
	c, ok := o.curves[j.ID]
	if ok && c.n == n && c.last == j.Progress[n-1] {
		return c.curve, c.err
	}
	cv, err := FitCurve(j.Progress)
	o.curves[j.ID] = curveCache{n: n, last: j.Progress[n-1], curve: cv, err: err}
	return cv, err
}
