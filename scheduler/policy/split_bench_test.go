package policy_test

import (
	"slices"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// BenchmarkSplitDecide times the Framework's split passes against the
// serial ones side by side in one process, at 10,000 nodes × 100,000
// queued jobs under churn (the scalebench churn, tracked): two instances
// of an ordering decide the same snapshots, one with every pass serial,
// alternating which goes first. It reports each side's wall p50 and
// minimum per decision (the minimum is what a decision takes when the
// other processor is free: on a shared machine the median is the
// neighbours'). -bench 'SplitDecide/fifo' picks one ordering.
func BenchmarkSplitDecide(b *testing.B) {
	sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 250, NodesPerRack: 40, GPUsPerNode: 8},
		Running: 40000, Queued: 100000, Busy: 0.9, FracShare: 0.2, ElasticShare: 0.2}
	base := pt.Random(42, sp)
	churn := pt.ChurnSpec{Interval: 10, Finish: 10 / 5000.0, Arrive: 80, Jobs: sp}
	for _, name := range []string{"fifo", "srtf-oracle", "tiresias-las"} {
		b.Run(name, func(b *testing.B) { benchSplit(b, pt.Clone(base), churn, name) })
	}
}

func benchSplit(b *testing.B, s *policy.Snapshot, spec pt.ChurnSpec, name string) {
	defer policy.SetSplitMin(policy.SetSplitMin(0))
	def := policy.SetSplitMin(0)
	policy.SetSplitMin(def)
	cfg := registry.Config{GittinsPrior: []float64{100, 900, 3000, 20000, 80000}}
	serial, _ := registry.New(name, cfg)
	parted, err := registry.New(name, cfg)
	if err != nil {
		b.Fatal(err)
	}
	c := pt.NewChurn(7, s, spec)
	var lat [2][]time.Duration
	decide := func(side int) policy.Decision {
		p := []policy.Policy{serial, parted}[side]
		policy.SetSplitMin(map[bool]int{true: 1 << 30, false: def}[side == 0])
		t0 := time.Now()
		d := p.Decide(c.S)
		lat[side] = append(lat[side], time.Since(t0))
		return policy.Decision{Starts: slices.Clone(d.Starts), Preempts: slices.Clone(d.Preempts)}
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
		if len(d.Starts) != len(e.Starts) || !slices.Equal(d.Preempts, e.Preempts) {
			b.Fatalf("serial and split decisions differ")
		}
		c.Step(d)
	}
	b.StopTimer()
	for side, n := range []string{"serial", "split"} {
		v := slices.Clone(lat[side])
		slices.Sort(v)
		b.ReportMetric(float64(v[len(v)/2].Nanoseconds()), n+"-p50-ns")
		b.ReportMetric(float64(v[0].Nanoseconds()), n+"-min-ns")
	}
}
