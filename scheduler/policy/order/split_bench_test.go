package order

import (
	"slices"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// BenchmarkOrderSplit times the orderings alone on a churning tracked
// snapshot of 10,000 nodes and ~121,000 jobs (the scale benchmark's),
// serial and split across GOMAXPROCS workers, side by side: two
// instances rank the same snapshot each round, in alternating order, and
// the wall time of each is reported (min and p50 over the rounds). The
// rounds apply no decision: running jobs advance, ~80 finish and as many
// arrive, so keys churn as under the scheduler.
//
//	go test -run '^$' -bench OrderSplit -benchtime 20x ./scheduler/policy/order/
func BenchmarkOrderSplit(b *testing.B) {
	prior := spreadPrior()
	sp := scaleSpec
	base := pt.Random(42, sp)
	mk := map[string]func() policy.Orderer{
		"tiresias-gittins": func() policy.Orderer {
			o, _ := NewGittins(GittinsConfig{QueueConfig: DefaultQueueConfig(), Prior: prior})
			return o
		},
		"fair":         func() policy.Orderer { o, _ := NewFair(FairConfig{}); return o },
		"tiresias-las": func() policy.Orderer { o, _ := NewLAS(DefaultQueueConfig()); return o },
		"srtf-oracle":  func() policy.Orderer { return NewSRTFOracle() },
		"fifo":         func() policy.Orderer { return NewFIFO(FIFOConfig{}) },
		"lucid":        func() policy.Orderer { o, _ := NewLucid(LucidConfig{}); return o },
	}
	for _, name := range []string{"tiresias-gittins", "fair", "tiresias-las", "srtf-oracle", "fifo", "lucid"} {
		b.Run(name, func(b *testing.B) {
			s := pt.Clone(base)
			c := pt.NewChurn(7, s, pt.ChurnSpec{Interval: 10, Finish: 10.0 / 5000, Arrive: 80, Jobs: sp})
			serial, split := mk[name](), mk[name]()
			timed := func(o policy.Orderer, w int) func() time.Duration {
				return func() time.Duration {
					pw := parWorkers
					defer func() { parWorkers = pw }()
					parWorkers = w
					t0 := time.Now()
					o.Order(s)
					return time.Since(t0)
				}
			}
			ts, tp := sideBySide(b, c, 2, timed(serial, 1), timed(split, 0))
			reportMinP50(b, "serial", ts)
			reportMinP50(b, "split", tp)
		})
	}
}

// scaleSpec is the scale benchmark's snapshot (scalebench at 10k): 10,000
// nodes of 8 GPUs, 40,000 running jobs (as many as fit 90 %) and 100,000
// queued.
var scaleSpec = pt.RandomSpec{
	Cluster: pt.ClusterSpec{Racks: 250, NodesPerRack: 40, GPUsPerNode: 8},
	Running: 40000, Queued: 100000, Busy: 0.9, FracShare: 0.2, ElasticShare: 0.2,
}

// sideBySide times two rankers on the same churning snapshot, warm calls
// first (the first calls sort in full), then b.N rounds in alternating
// order, the churn stepped between rounds outside the timer.
func sideBySide(b *testing.B, c *pt.Churn, warm int, x, y func() time.Duration) (tx, ty []time.Duration) {
	for range warm {
		x()
		y()
		c.Step(policy.Decision{})
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			tx, ty = append(tx, x()), append(ty, y())
		} else {
			ty, tx = append(ty, y()), append(tx, x())
		}
		b.StopTimer()
		c.Step(policy.Decision{})
		b.StartTimer()
	}
	return tx, ty
}

// reportMinP50 reports the fastest and the median of ds as name-min-ms
// and name-p50-ms.
func reportMinP50(b *testing.B, name string, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[0].Microseconds())/1e3, name+"-min-ms")
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1e3, name+"-p50-ms")
}
