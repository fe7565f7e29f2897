package optimus

import (
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// apply turns targets into Starts: shrinks, then admissions, then growths.
func (o *Optimus) apply(s *policy.Snapshot, es []*entry, dec *policy.Decision) {
	c := policy.NewCapacity(&s.Cluster)
	for _, e := range es {
		if e.running() && e.target < e.cur {
			o.shrink(c, e, dec)
		}
	}
	for _, e := range admissionOrder(es) {
		o.admit(c, e, dec)
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
// target does not place.
func (o *Optimus) admit(c *policy.Capacity, e *entry, dec *policy.Decision) {
	if e.target == 0 {
		dec.Waiting[e.job.ID] = "optimus: GPUs went to jobs with larger marginal gain (needs " +
			demandText(e.job, e.lo) + ", estimated " + secs(e.est.remaining(e.lo)) + " left by " + e.est.how + ")"
		return
	}
	why := ""
	for _, w := range []int{e.target, e.lo} {
		if p, bad := o.placeGang(c, e.job, w); bad == "" {
			dec.Starts = append(dec.Starts, policy.Start{JobID: e.job.ID, Placement: p})
			return
		} else if why == "" {
			why = bad
		}
		if e.target == e.lo {
			break
		}
	}
	dec.Waiting[e.job.ID] = why
}

// grow re-places a running job at its larger target, or leaves it be.
func (o *Optimus) grow(c *policy.Capacity, e *entry, dec *policy.Decision) {
	u := o.util(e.job)
	c.Release(e.job.Placement, u)
	if p, why := o.placeGang(c, e.job, e.target); why == "" {
		dec.Starts = append(dec.Starts, policy.Start{JobID: e.job.ID, Placement: p})
		return
	}
	_ = c.Commit(e.job.Placement, u) // unchanged: it keeps running as is
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
	if err := c.Commit(p, o.util(j)); err != nil {
		return policy.Placement{}, "placer chose an invalid placement: " + err.Error()
	}
	return p, ""
}

func demandText(j *policy.Job, w int) string {
	d, err := policy.DemandWith(j, w)
	if err != nil {
		return "?"
	}
	return d.String()
}
