package sim

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

func TestRackTopologyLinks(t *testing.T) {
	c, err := Homogeneous(4, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := RackTopology(&c, []float64{100, 10}, 4); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a, b string
		want float64
	}{{"n0000", "n0001", 100}, {"n0002", "n0003", 10}, {"n0000", "n0002", 2.5}} {
		if g, _ := c.Links.Gbps(tc.a, tc.b); g != tc.want {
			t.Errorf("%s↔%s = %g Gbit/s, want %g", tc.a, tc.b, g, tc.want)
		}
	}
	if err := RackTopology(&c, nil, 4); err == nil {
		t.Error("no rack speeds accepted")
	}
}

// linkBlind hides measured links from its policy: network-aware placement
// as it was before gossip, on node uplinks and racks only.
type linkBlind struct{ policy.Policy }

// Unwrap lets the simulator see the wrapped policy's wake-ups.
func (l linkBlind) Unwrap() policy.Policy { return l.Policy }

// EventDriven and ObserveFinished pass through, so the simulator drives
// the wrapped policy exactly as it drives the unwrapped ones.
func (l linkBlind) EventDriven() bool {
	ed, ok := l.Policy.(EventDriven)
	return ok && ed.EventDriven()
}

func (l linkBlind) ObserveFinished(j *policy.Job) {
	if o, ok := l.Policy.(finishObserver); ok {
		o.ObserveFinished(j)
	}
}

func (l linkBlind) Decide(s *policy.Snapshot) policy.Decision {
	c := *s
	c.Cluster.Links = nil
	return l.Policy.Decide(&c)
}

// topologyFactory adds "<ordering>+random" and "<ordering>+uplinks-only"
// (network-aware without the measured pairs) to the registry's names.
func topologyFactory(name string) (policy.Policy, error) {
	if base, ok := strings.CutSuffix(name, "+uplinks-only"); ok {
		p, err := registry.New(base+"+network-aware", registry.Config{})
		return linkBlind{p}, err
	}
	base, ok := strings.CutSuffix(name, "+random")
	if !ok {
		return registry.New(name, registry.Config{})
	}
	p, err := registry.New(base+"+consolidated", registry.Config{})
	if err != nil {
		return nil, err
	}
	return policy.NewFramework(p.(*policy.Framework).Order, Random{Seed: 1}), nil
}

// BenchmarkLiquidTopology reruns the Liquid comparison on links that
// differ: Philly VC 7f04ca with profiled models on 20 nodes × 4 GPUs in 5
// racks of 100/100/25/10/10 Gbit/s NICs and 4:1 oversubscribed uplinks.
// It reports average JCT and job speed per policy (not a test: minutes).
//
//	go test ./scheduler/sim -run '^$' -bench LiquidTopology -benchtime 1x
func BenchmarkLiquidTopology(b *testing.B) {
	spec := Spec{Name: "profiles-topology", Trace: "philly:" + repo.SharedTraces(b, "philly", "philly_jobs.csv"), VC: "7f04ca",
		GPUs: 80, GPUsPerNode: 4, NodesPerRack: 4, Profiles: repo.SharedTraces(b, "model-profiles"), AssignModels: true, Seed: 1}
	sc, _, err := spec.Load()
	if err != nil {
		b.Fatal(err)
	}
	if err := RackTopology(&sc.Cluster, []float64{100, 100, 25, 10, 10}, 4); err != nil {
		b.Fatal(err)
	}
	names := []string{"fifo+network-aware", "fifo+consolidated", "fifo+random", "fifo+uplinks-only",
		"tiresias-las+network-aware", "tiresias-las+consolidated", "tiresias-las+random", "tiresias-las+uplinks-only"}
	for range b.N {
		rs, err := Compare(sc, names, topologyFactory, 2, nil)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(os.Stdout, "\n%-28s %14s %10s %10s\n", "policy", "avg JCT (s)", "vs consol.", "job speed")
		for i, r := range rs {
			cons := rs[i/4*4+1].Metrics.AvgJCT
			fmt.Fprintf(os.Stdout, "%-28s %14.0f %+9.1f%% %10.3f\n", names[i], r.Metrics.AvgJCT, 100*(r.Metrics.AvgJCT/cons-1), jobSpeed(r))
		}
	}
}

// jobSpeed is the mean over jobs of recorded work / wall time from first
// start to finish (1 = as fast as the trace recorded it).
func jobSpeed(r *Result) float64 {
	var sum float64
	n := 0
	for _, j := range r.Jobs {
		if run := j.Finish - j.Start; run > 0 {
			sum += j.Duration / run
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
