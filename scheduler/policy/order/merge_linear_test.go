package order

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// mergeCase is a merge of b (sorted) into a (sorted) over keys ks listed
// at random, with ties in queue and first key (comparisons then fall
// through to the later keys and the jobs) or first keys that rarely tie.
func mergeCase(seed uint64, na, nb int, ties bool) (ks []keyed, a, b []int32) {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := na + nb
	ks = make([]keyed, n)
	for i := range ks {
		ks[i] = keyed{job: &policy.Job{ID: string(rune('a' + i%26)), Submit: float64(rng.IntN(50))}, queue: int32(rng.IntN(3)),
			k: [3]float64{float64(rng.IntN(1 + n/4)), float64(rng.IntN(4)), 0}}
		if !ties {
			ks[i].queue, ks[i].k[0] = 0, rng.Float64()
		}
	}
	perm := rng.Perm(n)
	for _, p := range perm[:na] {
		a = append(a, int32(p))
	}
	for _, p := range perm[na:] {
		b = append(b, int32(p))
	}
	cmp := func(x, y int32) int { return compareAt(ks, x, y) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return ks, a, b
}

// bisect is a plain merge by binary search, the reference the linear
// and galloping merges are checked against.
func bisect(ks []keyed, a, b, out []int32) {
	n, lo := 0, 0
	for _, x := range b {
		l, h := lo, len(a)
		for l < h {
			m := int(uint(l+h) >> 1)
			if compareAt(ks, a[m], x) < 0 {
				l = m + 1
			} else {
				h = m
			}
		}
		n += copy(out[n:], a[lo:l])
		out[n] = x
		n, lo = n+1, l
	}
	copy(out[n:], a[lo:])
}

// The linear merge on gathered keys and the galloping merge place every
// element where a plain binary-search merge does, whatever the share of
// b, ties in queue and first key included.
func TestMergeLinearAsBisect(t *testing.T) {
	for seed, sz := range [][2]int{{5000, 5000}, {40000, 2000}, {3000, 9000}, {4096, 1}, {1, 5000}, {0, 4096}, {20000, 20000}} {
		ks, a, b := mergeCase(uint64(seed), sz[0], sz[1], seed%2 == 0)
		want := make([]int32, len(a)+len(b))
		bisect(ks, a, b, want)
		for name, merge := range map[string]func(ks []keyed, a, b, out []int32){
			"linear": mergeLinear, "galloping": mergeGallop, "mergeInto's": mergeInto} {
			got := make([]int32, len(a)+len(b))
			merge(ks, a, b, got)
			if !slices.Equal(got, want) {
				t.Fatalf("%d into %d: the %s merge differs from the binary-search one", len(b), len(a), name)
			}
		}
	}
}

// BenchmarkMerge merges 20,000 moved keys into 100,000 by galloping and
// linearly, the keys listed at random as an ordering's are (the linear
// merge's own parts are what mergeParts runs side by side).
func BenchmarkMerge(b *testing.B) {
	ks, xa, xb := mergeCase(1, 100000, 20000, false)
	out := make([]int32, len(xa)+len(xb))
	b.Run("gallop", func(b *testing.B) {
		for b.Loop() {
			mergeGallop(ks, xa, xb, out)
		}
	})
	b.Run("linear", func(b *testing.B) {
		for b.Loop() {
			mergeLinear(ks, xa, xb, out)
		}
	})
}
