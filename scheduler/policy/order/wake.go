package order

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// limitTol is the relative slack under a queue limit at which attained
// service counts as having reached it. A simulator that wakes at the
// computed crossing time adds service as rate × (time − then) and may land
// an ulp short of the limit; without the slack it would wake again and
// again without crossing.
const limitTol = 1e-9

// reached reports whether service a has reached limit.
func reached(a, limit float64) bool { return a >= limit-limitTol*limit }

// NextChange is when, with no arrival or completion, the queues next
// change: the earliest time a running job's service reaches its queue's
// limit (running jobs gain their GPU share of service per second) or a
// waiting job's starvation knob fires. +Inf if never. Between now and then
// the ordering's ranking, and so the decision, cannot change: an executor
// may sleep until then instead of polling (the simulator does).
func (q *queues) nextChange(now policy.Seconds, js []*policy.Job) policy.Seconds {
	t := math.Inf(1)
	last := q.cfg.Queues - 1
	knob := q.cfg.PromoteKnob > 0
	for _, j := range js {
		if j == nil || (j.State != policy.Running && (!knob || j.State != policy.Queued)) {
			continue
		}
		var b baseline
		if len(q.base) > 0 {
			b = q.base[j.ID]
		}
		a, ex := j.ServiceAt(now)
		svc := a - b.attained
		k := q.queueOf(svc)
		switch {
		case j.State == policy.Running && k < last:
			if rate := heldShare(j); rate > 0 {
				t = min(t, accruesFrom(j, now)+(q.cfg.Limits[k]-svc)/rate)
			}
		case j.State == policy.Queued && k > 0:
			if ran := ex - b.executed; ran > 0 {
				t = min(t, queuedAt(j)+q.cfg.PromoteKnob*ran)
			}
		}
	}
	return t
}

// accruesFrom is when a running job's service next grows from what it
// is at now: now, unless its Accrual begins later.
func accruesFrom(j *policy.Job, now policy.Seconds) policy.Seconds {
	if j.Accrual.On && j.Accrual.Since > now {
		return j.Accrual.Since
	}
	return now
}

// heldShare is the GPU share a running job holds: what its service grows by
// per second.
func heldShare(j *policy.Job) float64 {
	s := j.Placement.GPUs()
	if s == 0 {
		return gpuShare(j)
	}
	return s
}

// NextChange is when 2D-LAS's queues next change (see queues.nextChange).
func (o *LAS) NextChange(s *policy.Snapshot) policy.Seconds { return o.q.nextChange(s.Now, s.Jobs) }

// NextChange is when the queues next change (see queues.nextChange).
func (o *LASMLFQ) NextChange(s *policy.Snapshot) policy.Seconds {
	return o.q.nextChange(s.Now, s.Jobs)
}

// NextChange is when 2D-Gittins' queues next change. Inside a queue the
// index of a waiting job is constant; a running job's index changes but
// only orders it among running jobs of its queue, which matters only when
// an event makes a higher-queue job preempt, and then it is recomputed.
func (o *Gittins) NextChange(s *policy.Snapshot) policy.Seconds { return o.q.nextChange(s.Now, s.Jobs) }

// NextChange is +Inf: FIFO's ranking changes only when jobs arrive or
// finish.
func (*FIFO) NextChange(*policy.Snapshot) policy.Seconds { return math.Inf(1) }

// NextChange is +Inf: a running job's remaining time only shrinks, moving
// it up, so time alone never makes SRTF preempt or start anything.
func (*SRTFOracle) NextChange(*policy.Snapshot) policy.Seconds { return math.Inf(1) }

// holdsUntil is the latest Now at which a running job keyed in queue
// e.queue, accruing as a says, is still in that queue (mover.until for
// 2D-LAS): +Inf in the last queue or without accrual, −Inf when no such
// time is found. A churned decision at 10,000 nodes re-keyed every one
// of ~40,000 running jobs to find the few that changed queue.
//
// The time is checked, not trusted: service only grows with Now (the
// accrual is monotone in float arithmetic too), so a time u at which
// Accrual.At gives service short of the limit, computed exactly as the
// mover will, bounds every Now ≤ u.
func (q *queues) holdsUntil(e *posKey, a *accKey) float64 {
	k := int(e.queue)
	switch {
	case k == q.cfg.Queues-1:
		return math.Inf(1)
	case k < 0 || k >= q.cfg.Queues:
		return math.Inf(-1)
	}
	limit := q.cfg.Limits[k]
	short := func(u float64) bool {
		at, _ := a.acc.At(u, a.attained, a.executed)
		return !reached(at, limit)
	}
	if !(a.acc.GPUs > 0) {
		if a.acc.GPUs == 0 && short(a.acc.Since) {
			return math.Inf(1) // it gains nothing
		}
		return math.Inf(-1)
	}
	thr := limit - limitTol*limit
	u0 := a.acc.Since + (thr-a.attained)/a.acc.GPUs
	for margin := 1e-9 * (math.Abs(u0) + 1); margin < 1e3; margin *= 1e3 {
		if u := u0 - margin; short(u) {
			return u
		}
	}
	return math.Inf(-1)
}

// mover re-keys an accruing running job whose key holds its queue and,
// in k[0], its state tie (2D-LAS; 2D-Gittins ranked by changes, whose
// running jobs' keys hold nothing else that moves): its queue at its
// service, held until the service reaches the queue's limit
// (holdsUntil). A job of another state is read.
func (q *queues) mover() mover {
	return mover{move: func(_ int, e *posKey, _, attained, _ float64) bool {
		if e.k[0] != runningTie {
			return false
		}
		e.queue = int32(q.queueOf(attained))
		return true
	}, until: q.holdsUntil}
}
