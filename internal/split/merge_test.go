package split

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A two-phase merge through PlaceAdds writes exactly the serial merge:
// random sorted old lists with random drops, random sorted adds
// (distinct from every old entry), 1 to 6 parts, some of them with no
// staying entry at all.
func TestPlaceAddsMatchesSerialMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		n, m := rng.IntN(40), rng.IntN(20)
		vals := rng.Perm(2 * (n + m + 1))[:n+m] // distinct values
		old, adds := slices.Clone(vals[:n]), slices.Clone(vals[n:])
		slices.Sort(old)
		slices.Sort(adds)
		stays := make([]bool, n)
		for i := range stays {
			stays[i] = rng.IntN(3) > 0 || trial%7 == 0
		}
		var want []int
		a := 0
		for i, v := range old {
			if !stays[i] {
				continue
			}
			for ; a < len(adds) && adds[a] < v; a++ {
				want = append(want, adds[a])
			}
			want = append(want, v)
		}
		want = append(want, adds[a:]...)

		k := 1 + rng.IntN(6)
		parts := make([]MergePart, k)
		Run(n, k, 3, func(p, lo, hi int) {
			kept, last := 0, -1
			for i := lo; i < hi; i++ {
				if stays[i] {
					kept, last = kept+1, i
				}
			}
			parts[p].Kept, parts[p].Last = kept, last
		})
		keptAll, addsAt := PlaceAdds(parts, len(adds), func(a, last int) bool { return adds[a] >= old[last] })
		got := make([]int, keptAll+len(adds))
		Run(n, k, 3, func(p, lo, hi int) {
			pa := &parts[p]
			o, a := pa.Out, pa.Lo
			for i := lo; i < hi; i++ {
				if !stays[i] {
					continue
				}
				for ; a < pa.Hi && adds[a] < old[i]; a, o = a+1, o+1 {
					got[o] = adds[a]
				}
				got[o] = old[i]
				o++
			}
		})
		copy(got[keptAll+addsAt:], adds[addsAt:])
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d parts): merged %v, want %v", trial, k, got, want)
		}
	}
}
