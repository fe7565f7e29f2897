package optimus

import (
	"math"
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// apply turns targets into Starts on the free capacity c: shrinks, then
// admissions (the Starts o.admitSpan spans), then growths. Each uses only
// what the ones before it left or freed, so a budget may drop a suffix
// (policy.TrimStarts).
func (o *Optimus) apply(c *policy.Capacity, es []*entry, queue []qrec, dec *policy.Decision) {
	for _, e := range o.resized(es) {
		if e.running() && e.target < e.cur {
			o.shrink(c, e, dec)
		}
	}
	o.admitSpan[0] = len(dec.Starts)
	if w := parWorkers(); w > 1 && !o.skipReasons && len(queue) >= parMin {
		o.admitSplit(c, queue, dec, w)
	} else {
		var buf []byte // reused to build each waiting text
		for i := range queue {
			buf = o.admit(c, &queue[i], dec, buf)
		}
	}
	o.admitSpan[1] = len(dec.Starts)
	for _, e := range o.resized(es) {
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
func (o *Optimus) admit(c *policy.Capacity, r *qrec, dec *policy.Decision, buf []byte) []byte {
	if !r.admit {
		if o.skipReasons {
			return buf
		}
		if r.text == "" {
			r.text, buf = o.gainText(&o.buf.slab[r.pos], buf)
		}
		dec.Waiting = append(dec.Waiting, policy.Wait{JobID: r.id, Reason: r.text})
		return buf
	}
	e := &o.buf.slab[r.pos]
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

// waitText is the Waiting text last built for the job at one position of
// the snapshot, with what it was built from.
type waitText struct {
	id, how, text string
	lo            int
	frac, rem     float64
	mem           int64
}

// keptText is the Waiting text gainText built for e's job last time,
// when its request and estimate have not moved since, else "". Its
// estimate differs from job to job, and formatting one for each of
// 100,000 queued jobs on every decision was a third of a decision; the
// text is found by the job's position in the snapshot (schedulers list
// their jobs in a stable order), in collect's pass in that order.
func (o *Optimus) keptText(e *entry) string {
	if o.skipReasons || e.run || e.pos >= len(o.texts) {
		return ""
	}
	c := &o.texts[e.pos]
	if c.text != "" && c.id == e.id && c.how == e.est.how && c.lo == e.lo && c.mem == e.mem &&
		math.Float64bits(c.frac) == math.Float64bits(e.frac) &&
		math.Float64bits(c.rem) == math.Float64bits(e.est.remaining(e.lo)) {
		return c.text
	}
	return ""
}

// gainText is the Waiting text of a job that got no GPUs: the one kept
// (keptText), or a new one, kept for the next decision. buf is scratch
// space, returned possibly grown.
func (o *Optimus) gainText(e *entry, buf []byte) (string, []byte) {
	if e.text != "" {
		return e.text, buf
	}
	rem := e.est.remaining(e.lo)
	buf = append(buf[:0], "optimus: GPUs went to jobs with larger marginal gain (needs "...)
	buf = policy.Demand{Workers: e.lo, Fraction: e.frac, MemMiB: e.mem}.AppendText(buf)
	buf = append(buf, ", estimated "...)
	buf = appendSecs(buf, rem)
	buf = append(append(append(buf, " left by "...), e.est.how...), ')')
	text := string(buf)
	if e.pos >= len(o.texts) {
		o.texts = slices.Grow(o.texts, e.pos+1-len(o.texts))[:e.pos+1]
	}
	o.texts[e.pos] = waitText{id: e.id, how: e.est.how, text: text, lo: e.lo, frac: e.frac, rem: rem, mem: e.mem}
	e.text = text // kept with the entry while the job is unchanged
	return text, buf
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
