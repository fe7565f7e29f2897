package registry

import (
	"testing"

	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// BenchmarkBoundedDecide compares one decision of the utilisation-bounded
// and the pair-bounded Horus placement side by side, cold, on 120 nodes
// with up to 400 running and 1,000 queued jobs, half of them fractional.
//
//	go test ./scheduler/policy/registry -run X -bench BoundedDecide -benchtime 10x
func BenchmarkBoundedDecide(b *testing.B) {
	sp := smallSpec()
	sp.Cluster.NodesPerRack, sp.Running, sp.Queued, sp.FracShare = 40, 400, 1000, 0.5
	base := pt.Random(42, sp)
	for _, name := range []string{"fifo+interference-aware", "fifo+interference-bounded", "tiresias-las+interference-aware", "tiresias-las+interference-bounded"} {
		cfg := Config{}
		cfg.Interference.Pairs = hashPairs{}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p, err := New(name, cfg)
				if err != nil {
					b.Fatal(err)
				}
				s := pt.Clone(base)
				b.StartTimer()
				p.Decide(s)
			}
		})
	}
}
