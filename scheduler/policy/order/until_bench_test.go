package order

import (
	"testing"
	"time"

	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// BenchmarkLASUntil times 2D-LAS' change-driven ranking with and
// without the movers' until (running jobs re-keyed only once their
// service can reach their queue's limit), side by side on the scale
// benchmark's churning tracked snapshot with accruing running jobs:
// two instances rank the same snapshot each round, in alternating order.
//
//	go test -run '^$' -bench LASUntil -benchtime 40x ./scheduler/policy/order/
func BenchmarkLASUntil(b *testing.B) {
	sp := scaleSpec
	s := pt.Random(42, sp)
	c := pt.NewChurn(7, s, pt.ChurnSpec{Interval: 10, Finish: 10.0 / 5000, Arrive: 80, Jobs: sp, Accrue: true})
	with, _ := NewLAS(DefaultQueueConfig())
	without, _ := NewLAS(DefaultQueueConfig())
	without.sc.kc.mv.until = nil
	timed := func(o *LAS) func() time.Duration {
		return func() time.Duration {
			t0 := time.Now()
			o.Order(c.S)
			return time.Since(t0)
		}
	}
	tw, to := sideBySide(b, c, 3, timed(with), timed(without))
	reportMinP50(b, "until", tw)
	reportMinP50(b, "every", to)
}
