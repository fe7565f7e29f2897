package policy

import (
	"math/rand/v2"
	"testing"
)

// live finds the highest position at or below k whose job is not
// preempted, as a scan would, however preemptions and queries
// interleave: its links only ever skip preempted positions, and the
// paths it halves stay true.
func TestLiveSkipsPreempted(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 1 + rng.IntN(300)
		r := &round{skip: make([]int32, n)}
		for k := range r.skip {
			r.skip[k] = int32(k)
		}
		out := make([]bool, n)
		scan := func(k int) int {
			for k >= 0 && out[k] {
				k--
			}
			return k
		}
		for step := 0; step < 4*n; step++ {
			k := rng.IntN(n)
			if rng.IntN(3) == 0 && !out[k] { // preempt marks it so (preempt)
				out[k], r.skip[k] = true, int32(k)-1
				continue
			}
			if got, want := r.live(k), scan(k); got != want {
				t.Fatalf("seed %d step %d: live(%d) = %d, a scan finds %d", seed, step, k, got, want)
			}
		}
	}
}
