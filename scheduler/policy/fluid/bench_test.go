package fluid

import (
	"fmt"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/optimus"
)

// BenchmarkPlanGroup: one planning of 64 trials on 16 GPUs (packing) and
// of 8 trials on 64 GPUs (spreading).
func BenchmarkPlanGroup(b *testing.B) {
	for _, c := range []struct{ trials, gpus int }{{64, 16}, {8, 64}} {
		ts := trials(c.trials, 0.4, optimus.Speed{C0: 1, C1: 0.1, C2: 0.01})
		for i := range ts {
			ts[i].Remaining = float64(100 + i)
		}
		b.Run(fmt.Sprintf("%dtrials-%dgpus", c.trials, c.gpus), func(b *testing.B) {
			for range b.N {
				PlanGroup(Pool{Count: c.gpus, MemMiB: 16000}, ts, Config{})
			}
		})
	}
}

// BenchmarkDecide: a 32-node × 8-GPU cluster, 4 tuning groups of 40 trials
// and 100 ordinary jobs, one decision.
func BenchmarkDecide(b *testing.B) {
	s := &policy.Snapshot{Cluster: cluster(32, 8)}
	for g := 0; g < 4; g++ {
		for i := 0; i < 40; i++ {
			s.Jobs = append(s.Jobs, &policy.Job{ID: fmt.Sprintf("g%d/dispatch-%d", g, i), Submit: float64(g), Workers: 1, Fraction: 1,
				MemMiB: 2000, Util: 0.3, StepTimes: map[int]policy.Seconds{1: 1, 2: 0.6, 4: 0.4}})
		}
	}
	for i := 0; i < 100; i++ {
		s.Jobs = append(s.Jobs, &policy.Job{ID: fmt.Sprint("j", i), Submit: float64(i), Workers: 1 + i%4, Fraction: 1})
	}
	p := newFluid(WaterFill)
	b.ResetTimer()
	for range b.N {
		p.Decide(s)
	}
}
