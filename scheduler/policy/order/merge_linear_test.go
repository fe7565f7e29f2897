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

// gallop is mergeInto's galloping merge alone.
func gallop(ks []keyed, a, b, out []int32) {
	n, lo := 0, 0
	for _, x := range b {
		l, h := lo, len(a)
		for l < h { // a plain binary search: the reference
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

// The linear merge on gathered keys places every element where the
// galloping merge does, whatever the share of b, ties in queue and first
// key included.
func TestMergeLinearAsGallop(t *testing.T) {
	for seed, sz := range [][2]int{{5000, 5000}, {40000, 2000}, {3000, 9000}, {4096, 1}, {1, 5000}, {0, 4096}, {20000, 20000}} {
		ks, a, b := mergeCase(uint64(seed), sz[0], sz[1], seed%2 == 0)
		want := make([]int32, len(a)+len(b))
		gallop(ks, a, b, want)
		got := make([]int32, len(a)+len(b))
		mergeLinear(ks, a, b, got)
		if !slices.Equal(got, want) {
			t.Fatalf("%d into %d: the linear merge differs from the galloping one", len(b), len(a))
		}
		into := make([]int32, len(a)+len(b))
		mergeInto(ks, a, b, into)
		if !slices.Equal(into, want) {
			t.Fatalf("%d into %d: mergeInto differs from the galloping merge", len(b), len(a))
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
			n, lo := 0, 0
			for _, x := range xb {
				before := func(y int32) bool { return compareAt(ks, y, x) < 0 }
				step := 1
				for lo+step <= len(xa) && before(xa[lo+step-1]) {
					step *= 2
				}
				l, h := lo+step/2, min(lo+step, len(xa))
				for l < h {
					m := int(uint(l+h) >> 1)
					if before(xa[m]) {
						l = m + 1
					} else {
						h = m
					}
				}
				n += copy(out[n:], xa[lo:l])
				out[n] = x
				n, lo = n+1, l
			}
			copy(out[n:], xa[lo:])
		}
	})
	b.Run("linear", func(b *testing.B) {
		for b.Loop() {
			mergeLinear(ks, xa, xb, out)
		}
	})
}
