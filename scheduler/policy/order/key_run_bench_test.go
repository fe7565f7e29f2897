package order

import (
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// BenchmarkGittinsRun times 2D-Gittins' re-rank as it is ("run": its
// never-run jobs sorted apart, keyRun, and many moved jobs radix-sorted
// and merged, sortMoved) against the ranking before both ("all": a full
// sort past a quarter of the jobs moved), side by side on the scale
// benchmark's churning tracked snapshot, the distribution learning the
// finished jobs each round as under the Framework (so every never-run
// job's key moves): two instances rank the same snapshot each round, in
// alternating order.
//
// Measured (2 cores, p50): on the scale snapshot, whose queued jobs all
// ran before ("preempted"), 23.6 vs 22.9 ms: learning the ~80 finished
// jobs moves 60-97 % of the keys, past the half at which the re-rank
// sorts in full; learning one small sample a round instead (an earlier
// version of this benchmark), 17.6 -> 13.4 ms. On a backlog of which 9
// in 10 never ran, 18.0 -> 11.8 ms.
//
//	go test -run '^$' -bench GittinsRun -benchtime 40x ./scheduler/policy/order/
func BenchmarkGittinsRun(b *testing.B) {
	sp := scaleSpec
	for _, backlog := range []bool{false, true} {
		name := "preempted"
		if backlog {
			name = "backlog"
		}
		b.Run(name, func(b *testing.B) { benchGittinsRun(b, sp, backlog) })
	}
}

// benchGittinsRun is BenchmarkGittinsRun on one snapshot: the scale
// benchmark's, whose queued jobs all ran before (preempted: the run is
// only the arrivals), or one whose backlog mostly never ran (9 in 10
// queued jobs, as in a real queue).
func benchGittinsRun(b *testing.B, sp pt.RandomSpec, backlog bool) {
	s := pt.Random(42, sp)
	for _, j := range s.Jobs {
		if backlog && j.State == policy.Queued && j.ID[len(j.ID)-1] != '0' {
			j.Attained, j.Executed, j.QueuedSince = 0, 0, j.Submit
		}
	}
	c := pt.NewChurn(7, s, pt.ChurnSpec{Interval: 10, Finish: 10.0 / 5000, Arrive: 80, Jobs: sp, Accrue: true})
	prior := spreadPrior()
	cfg := GittinsConfig{QueueConfig: DefaultQueueConfig(), Prior: prior}
	run, _ := NewGittins(cfg)
	all, _ := NewGittins(cfg)
	// before: neither the run nor the moved radix (their thresholds out
	// of reach)
	timed := func(o *Gittins, before bool) func() time.Duration {
		return func() time.Duration {
			defer func(n, m int) { runMin, movedRadix = n, m }(runMin, movedRadix)
			if before {
				runMin, movedRadix = 1<<30, 1<<30
			}
			for _, j := range c.S.Jobs { // learnt as the Framework does
				if j.State == policy.Finished {
					o.ObserveFinished(j)
				}
			}
			t0 := time.Now()
			o.Order(c.S)
			return time.Since(t0)
		}
	}
	tr, ta := sideBySide(b, c, 3, timed(run, false), timed(all, true))
	reportMinP50(b, "run", tr)
	reportMinP50(b, "all", ta)
}
