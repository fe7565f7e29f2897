package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFenwickFillMatchesAdds: fill leaves every node bit for bit as
// adding the entries one by one does, empty entries included, whether it
// takes the one pass (dyadic entries: GPU shares in quarters, whole
// GPUs, gangs) or not (shares whose sums round).
func TestFenwickFillMatchesAdds(t *testing.T) {
	for _, vals := range [][]float64{{0, 0.25, 0.5, 0.75, 1, 2, 4, 8, 16, 1.5}, {0.1, 0.3, 1, 0.7, 2.2}} {
		for seed := uint64(0); seed < 50; seed++ {
			rng := rand.New(rand.NewPCG(seed, 3))
			n := 1 + rng.IntN(3000)
			a, b := fenwick{t: make([]float64, n+1)}, fenwick{t: make([]float64, n+1)}
			var idx []int
			v := make([]float64, n)
			for i := 0; i < n; i++ {
				if rng.IntN(3) != 0 {
					v[i] = vals[rng.IntN(len(vals))]
					idx = append(idx, i)
					a.add(i, v[i])
				}
			}
			b.fill(idx, func(i int) float64 { return v[i] })
			for k := range a.t {
				if math.Float64bits(a.t[k]) != math.Float64bits(b.t[k]) {
					t.Fatalf("values %v seed %d: node %d is %v filled, %v added", vals, seed, k, b.t[k], a.t[k])
				}
			}
		}
	}
}

// BenchmarkFenwickFill indexes 40,000 running jobs' shares among
// 140,000 ranks (the churn benchmark's 10k x 100k), one pass against
// an add per job:
//
//	go test -run '^$' -bench FenwickFill ./scheduler/policy/
func BenchmarkFenwickFill(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 140000
	v := make([]float64, n)
	var idx []int
	for i := 0; i < n; i++ {
		if rng.IntN(7) < 2 {
			v[i] = []float64{0.25, 0.5, 1, 2, 4, 8}[rng.IntN(6)]
			idx = append(idx, i)
		}
	}
	f := fenwick{t: make([]float64, n+1)}
	b.Run("fill", func(b *testing.B) {
		for range b.N {
			clear(f.t)
			f.fill(idx, func(i int) float64 { return v[i] })
		}
	})
	b.Run("adds", func(b *testing.B) {
		for range b.N {
			clear(f.t)
			for _, i := range idx {
				f.add(i, v[i])
			}
		}
	})
}
