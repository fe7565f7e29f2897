package policy_test

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// BenchmarkSplitDecide times the Framework's split passes against the
// serial ones side by side in one process (benchSides), at 10,000 nodes
// × 100,000 queued jobs under churn. It reports each side's wall p50,
// p99 and minimum per decision (the minimum is what a decision takes
// when the other processor is free: on a shared machine the median is
// the neighbours'). -bench 'SplitDecide/fifo' picks one ordering.
func BenchmarkSplitDecide(b *testing.B) {
	base, churn := scaleSpec()
	for _, name := range []string{"fifo", "srtf-oracle", "tiresias-las"} {
		b.Run(name, func(b *testing.B) {
			def := policy.SetSplitMin(0)
			defer policy.SetSplitMin(def)
			benchSides(b, pt.Clone(base), churn, name, [2]string{"serial", "split"}, func(side int) {
				policy.SetSplitMin(map[bool]int{true: 1 << 30, false: def}[side == 0])
			})
		})
	}
}
