package policy_test

import (
	"slices"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/internal/gcpace"
	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// scaleSpec is scalebench's 10,000 nodes × 100,000 queued jobs and its
// churn (BenchmarkScaleChurn), accruing service as its default does.
func scaleSpec() (*policy.Snapshot, pt.ChurnSpec) {
	sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 250, NodesPerRack: 40, GPUsPerNode: 8},
		Running: 40000, Queued: 100000, Busy: 0.9, FracShare: 0.2, ElasticShare: 0.2}
	return pt.Random(42, sp), pt.ChurnSpec{Interval: 10, Finish: 10 / 5000.0, Arrive: 80, Jobs: sp, Accrue: true}
}

// benchSides times two instances of the named ordering side by side in
// one process on the same churned snapshots (tracked), alternating which
// decides first, with set(side) called before each side's decision (it
// switches what the sides compare) and the collector paced between
// decisions as the live loop does. The two must decide the same. It
// reports each side's wall p50, p99 and minimum per decision as
// <names[side]>-p50-ns and so on.
func benchSides(b *testing.B, s *policy.Snapshot, spec pt.ChurnSpec, name string, names [2]string, set func(side int)) {
	cfg := registry.Config{GittinsPrior: []float64{100, 900, 3000, 20000, 80000}}
	var sides [2]policy.Policy
	for k := range sides {
		p, err := registry.New(name, cfg)
		if err != nil {
			b.Fatal(err)
		}
		sides[k] = p
	}
	c := pt.NewChurn(7, s, spec)
	gc := gcpace.New(gcpace.Config{})
	var lat [2][]time.Duration
	decide := func(side int) policy.Decision {
		set(side)
		gc.Idle()
		t0 := time.Now()
		d := sides[side].Decide(c.S)
		lat[side] = append(lat[side], time.Since(t0))
		return copyOf(d)
	}
	for w := 0; w < 6; w++ { // the cold decision and warm-up, as scalebench
		d := decide(0)
		decide(1)
		c.Step(d)
	}
	lat = [2][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		first := i % 2
		d := decide(first)
		e := decide(1 - first)
		if len(d.Starts) != len(e.Starts) || !slices.Equal(d.Preempts, e.Preempts) || !slices.Equal(d.Waiting, e.Waiting) {
			b.Fatalf("%s and %s decide differently", names[0], names[1])
		}
		c.Step(d)
	}
	b.StopTimer()
	for side, n := range names {
		v := slices.Clone(lat[side])
		slices.Sort(v)
		b.ReportMetric(float64(v[len(v)/2].Nanoseconds()), n+"-p50-ns")
		b.ReportMetric(float64(v[len(v)*99/100].Nanoseconds()), n+"-p99-ns")
		b.ReportMetric(float64(v[0].Nanoseconds()), n+"-min-ns")
	}
}
