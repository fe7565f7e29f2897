package sim

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Waker is implemented by policies (or, inside a policy.Framework, by
// their ordering) whose decisions change with the passage of time alone
// only at instants they can compute: NextChange is the earliest time after
// s.Now at which, with no arrival or completion and running jobs gaining
// their GPU share of service per second, the policy may decide
// differently; +Inf if never. 2D-LAS and 2D-Gittins return when the next
// running job's attained service reaches its queue's limit, or a starvation
// knob fires; FIFO and SRTF return +Inf. The simulator then needs no
// polling quantum for them: their results do not depend on it.
type Waker interface {
	NextChange(s *policy.Snapshot) float64
}

// WakerOf finds p's Waker: p itself, what it wraps (Unwrap), or the
// ordering of a Framework whose placement re-plans on its own schedule
// (a batch window) only if it has none. nil means p is polled every quantum
// (Optimus, elastic, batch windows, leases: periodic re-planning).
func WakerOf(p policy.Policy) Waker {
	switch x := p.(type) {
	case Waker:
		return x
	case interface{ Unwrap() policy.Policy }:
		return WakerOf(x.Unwrap())
	case *policy.Framework:
		if b, ok := x.Place.(policy.BatchPlacer); ok && b.BatchSize() > 1 {
			return nil
		}
		if w, ok := x.Order.(Waker); ok {
			return w
		}
	}
	return nil
}

// setWake asks the waker, after a decision, when to decide next with no
// other event; it never returns a time that is not after now.
func (e *engine) setWake() {
	if e.waker == nil {
		return
	}
	t := e.waker.NextChange(&policy.Snapshot{Now: e.now, Jobs: e.snapJobs, SubmitOrdered: true, SkipReasons: true})
	if !(t > e.now) && !math.IsInf(t, 1) {
		t = math.Nextafter(e.now, math.Inf(1))
	}
	e.wake = t
}
