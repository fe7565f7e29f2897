package sim

import (
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// progressStep is how often (fraction of the job's work) a running job
// "appends a line to its progress file": 2% gives Optimus ≤ 50 points.
const progressStep = 0.02

// progress appends convergence points as a job crosses progress marks,
// read from its model's measured curve (profile.Curve.LossAt).
func (e *engine) progress(j *simJob) {
	m := j.spec.Speed
	// A plain trace job's profile only prices spreading (NoSpeedup): its
	// curve would be a stand-in model's, stretched to the recorded
	// duration, which tells a fitting policy the oracle duration.
	if m == nil || j.spec.NoSpeedup || j.spec.Work <= 0 || len(m.Curves) == 0 {
		return
	}
	frac := 1 - j.remaining/j.spec.Work
	if frac < j.nextMark {
		return
	}
	if j.curve == nil {
		j.curve = m.CurveFor(float64(j.spec.GPUs) * m.RefBatch)
		j.steps = e.totalSteps(j)
	}
	for frac >= j.nextMark && j.nextMark <= 1 {
		step, loss := j.curve.LossAt(j.nextMark, j.steps)
		j.pj.Progress = append(j.pj.Progress, policy.ProgressPoint{Step: step, Loss: loss, Samples: step * m.RefBatch * float64(j.spec.GPUs)})
		j.nextMark += progressStep
	}
}

// totalSteps is the job's work expressed in training steps on its
// consolidated placement.
func (e *engine) totalSteps(j *simJob) float64 {
	t := j.spec.Speed.StepTime(profile.Consolidated(j.spec.GPUs, e.perNode))
	if t <= 0 {
		return 0
	}
	return j.spec.Work / t
}

// stepTimes fills the policy-visible step time per worker count (what a
// live job would report after running at that size). A step is one of the
// job's own steps, a global batch of GPUs × RefBatch samples, as in its
// progress file; the profile measures steps of RefBatch per worker, so w
// workers take StepTime(w) · GPUs/w per job step. (Reporting the profile's
// per-worker step time told Optimus that more workers are slower.)
func (e *engine) stepTimes(j *simJob) map[int]policy.Seconds {
	m := j.spec.Speed
	if m == nil {
		return nil
	}
	hi := max(j.spec.GPUs, j.spec.MaxWorkers)
	out := map[int]policy.Seconds{}
	at := func(w int) policy.Seconds {
		return m.StepTime(profile.Consolidated(w, e.perNode)) * float64(j.spec.GPUs) / float64(w)
	}
	for w := 1; w <= hi; w *= 2 {
		out[w] = at(w)
	}
	out[j.spec.GPUs] = at(j.spec.GPUs)
	return out
}
