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

// BenchmarkSkipWalkDecide times the skipping walk (walk_skip.go) against
// the walk that visits every queued job, side by side in one process, at
// 10,000 nodes × 100,000 queued jobs under churn (scalebench's
// BenchmarkScaleChurn: its snapshot and churn, tracked, the collector
// paced between decisions): two instances of an ordering decide the same
// snapshots, alternating which goes first, and must decide the same. It
// reports each side's wall p50, p99 and minimum per decision.
// -bench 'SkipWalkDecide/srtf' picks an ordering.
func BenchmarkSkipWalkDecide(b *testing.B) {
	sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 250, NodesPerRack: 40, GPUsPerNode: 8},
		Running: 40000, Queued: 100000, Busy: 0.9, FracShare: 0.2, ElasticShare: 0.2}
	base := pt.Random(42, sp)
	churn := pt.ChurnSpec{Interval: 10, Finish: 10 / 5000.0, Arrive: 80, Jobs: sp, Accrue: true}
	for _, name := range []string{"srtf-oracle", "tiresias-las", "fair", "tiresias-gittins", "lucid"} {
		b.Run(name, func(b *testing.B) { benchSkipWalk(b, pt.Clone(base), churn, name) })
	}
}

func benchSkipWalk(b *testing.B, s *policy.Snapshot, spec pt.ChurnSpec, name string) {
	least, off := policy.SetSkipWalk(0, false)
	defer policy.SetSkipWalk(least, off)
	cfg := registry.Config{GittinsPrior: []float64{100, 900, 3000, 20000, 80000}}
	plain, _ := registry.New(name, cfg)
	skipping, err := registry.New(name, cfg)
	if err != nil {
		b.Fatal(err)
	}
	c := pt.NewChurn(7, s, spec)
	gc := gcpace.New(gcpace.Config{}) // collect between decisions, as scalebench
	var lat [2][]time.Duration
	decide := func(side int) policy.Decision {
		policy.SetSkipWalk(least, side == 0)
		gc.Idle()
		t0 := time.Now()
		d := []policy.Policy{plain, skipping}[side].Decide(c.S)
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
			b.Fatalf("plain and skipping walks decide differently")
		}
		c.Step(d)
	}
	b.StopTimer()
	for side, n := range []string{"plain", "skipping"} {
		v := slices.Clone(lat[side])
		slices.Sort(v)
		b.ReportMetric(float64(v[len(v)/2].Nanoseconds()), n+"-p50-ns")
		b.ReportMetric(float64(v[len(v)*99/100].Nanoseconds()), n+"-p99-ns")
		b.ReportMetric(float64(v[0].Nanoseconds()), n+"-min-ns")
	}
}
