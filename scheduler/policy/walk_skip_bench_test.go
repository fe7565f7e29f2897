package policy_test

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// BenchmarkSkipWalkDecide times the skipping walk (walk_skip.go) against
// the walk that visits every queued job, side by side in one process
// (benchSides), at 10,000 nodes × 100,000 queued jobs under churn.
// -bench 'SkipWalkDecide/srtf' picks an ordering.
func BenchmarkSkipWalkDecide(b *testing.B) {
	base, churn := scaleSpec()
	for _, name := range []string{"srtf-oracle", "tiresias-las", "fair", "tiresias-gittins", "lucid"} {
		b.Run(name, func(b *testing.B) {
			least, off := policy.SetSkipWalk(0, false)
			defer policy.SetSkipWalk(least, off)
			benchSides(b, pt.Clone(base), churn, name, [2]string{"plain", "skipping"}, func(side int) {
				policy.SetSkipWalk(least, side == 0)
			})
		})
	}
}

// BenchmarkHolTailDecide times FIFO's Waits behind a blocked head
// written by split passes (walk_hol.go) against the serial loop, side by
// side in one process (benchSides), at 10,000 nodes × 100,000 queued
// jobs under churn.
func BenchmarkHolTailDecide(b *testing.B) {
	base, churn := scaleSpec()
	defer policy.SetHolSplit(policy.SetHolSplit(false))
	benchSides(b, pt.Clone(base), churn, "fifo", [2]string{"serial", "split"}, func(side int) {
		policy.SetHolSplit(side == 0)
	})
}
