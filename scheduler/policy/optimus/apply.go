package optimus

import (
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// apply turns targets into Starts on the free capacity c: shrinks, then
// admissions, then growths.
func (o *Optimus) apply(c *policy.Capacity, es, queue []*entry, dec *policy.Decision) {
	for _, e := range es {
		if e.running() && e.target < e.cur {
			o.shrink(c, e, dec)
		}
	}
	var buf []byte // reused to build each waiting text
	for _, e := range queue {
		buf = o.admit(c, e, dec, buf)
	}
	for _, e := range es {
		if e.running() && e.target > e.cur {
			o.grow(c, e, dec)
		}
	}
}

func (o *Optimus) util(j *policy.Job) float64 {
	if u, ok := o.place.(policy.UtilPredictor); ok {
		return u.PredictUtil(j)
	}
	return 0
}

// shrink keeps the first target slots and frees the rest.
func (o *Optimus) shrink(c *policy.Capacity, e *entry, dec *policy.Decision) {
	slots := e.job.Placement.Slots
	c.Release(policy.Placement{Slots: slots[e.target:]}, o.util(e.job))
	keep := policy.Placement{Slots: append([]policy.Slot(nil), slots[:e.target]...)}
	dec.Starts = append(dec.Starts, policy.Start{JobID: e.job.ID, Placement: keep})
}

// admit starts a queued job at its target, or at its minimum if the
// target does not place. buf is scratch space for the waiting text; the
// (possibly grown) buffer is returned for the next call.
func (o *Optimus) admit(c *policy.Capacity, e *entry, dec *policy.Decision, buf []byte) []byte {
	if e.target == 0 {
		if o.skipReasons {
			return buf
		}
		buf = append(buf[:0], "optimus: GPUs went to jobs with larger marginal gain (needs "...)
		buf = policy.Demand{Workers: e.lo, Fraction: e.frac, MemMiB: e.mem}.AppendText(buf)
		buf = append(buf, ", estimated "...)
		buf = appendSecs(buf, e.est.remaining(e.lo))
		buf = append(append(append(buf, " left by "...), e.est.how...), ')')
		dec.Waiting = append(dec.Waiting, policy.Wait{JobID: e.id, Reason: string(buf)})
		return buf
	}
	why := ""
	for _, w := range []int{e.target, e.lo} {
		if p, bad := o.placeGang(c, e.job, w); bad == "" {
			dec.Starts = append(dec.Starts, policy.Start{JobID: e.job.ID, Placement: p})
			return buf
		} else if why == "" {
			why = bad
		}
		if e.target == e.lo {
			break
		}
	}
	dec.Waiting = append(dec.Waiting, policy.Wait{JobID: e.job.ID, Reason: why})
	return buf
}

// grow re-places a running job at its larger target, or leaves it be.
func (o *Optimus) grow(c *policy.Capacity, e *entry, dec *policy.Decision) {
	u := o.util(e.job)
	c.ReleaseJob(e.job, u)
	if p, why := o.placeGang(c, e.job, e.target); why == "" {
		dec.Starts = append(dec.Starts, policy.Start{JobID: e.job.ID, Placement: p})
		return
	}
	_ = c.CommitJob(e.job, e.job.Placement, u) // unchanged: it keeps running as is
}

func (o *Optimus) placeGang(c *policy.Capacity, j *policy.Job, workers int) (policy.Placement, string) {
	d, err := policy.DemandWith(j, workers)
	if err != nil {
		return policy.Placement{}, err.Error()
	}
	p, why := o.place.Place(j, d, c)
	if why != "" {
		return policy.Placement{}, why
	}
	if len(p.Slots) != workers {
		return policy.Placement{}, "placer returned a partial gang"
	}
	if err := c.CommitJob(j, p, o.util(j)); err != nil {
		return policy.Placement{}, "placer chose an invalid placement: " + err.Error()
	}
	return p, ""
}
