package order

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// compareReference is the comparator sortKeyed must agree with: queue,
// then the keys (NaN as +Inf, -0 equal to +0), then submit time and ID.
func compareReference(x, y keyed) int {
	if x.queue != y.queue {
		return int(x.queue) - int(y.queue)
	}
	for k := range x.k {
		a, b := x.k[k], y.k[k]
		if a != a {
			a = math.Inf(1)
		}
		if b != b {
			b = math.Inf(1)
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
	}
	return compareSubmit(x.job, y.job)
}

// TestSortKeyedMatchesComparator checks the radix sort, full and coarse
// (fair's), against the comparison it replaced, on keys full of ties,
// signs, zeros, infinities and NaNs, and keys within a few ulps of each
// other (which a coarse sort leaves to its comparisons).
func TestSortKeyedMatchesComparator(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1e300, -1e300, math.Inf(1), math.Inf(-1), math.NaN(), 3250, 1e-300}
	for trial := 0; trial < 200; trial++ {
		n := rng.IntN(300)
		ks := make([]keyed, n)
		for i := range ks {
			j := &policy.Job{ID: "j" + strconv.Itoa(rng.IntN(1000000)) + "-" + strconv.Itoa(i), Submit: float64(rng.IntN(4))}
			ks[i] = keyed{job: j, queue: int32(rng.IntN(3))}
			for k := range ks[i].k {
				switch rng.IntN(3) {
				case 0:
					ks[i].k[k] = vals[rng.IntN(len(vals))]
				case 1:
					ks[i].k[k] = math.Nextafter(1000+float64(rng.IntN(3)), math.Inf(rng.IntN(2)*2-1)) + float64(rng.IntN(3))*1e-9
				default:
					ks[i].k[k] = rng.NormFloat64() * 1e4
				}
			}
		}
		want := slices.Clone(ks)
		slices.SortFunc(want, compareReference)
		if trial%2 == 1 {
			ks = slices.Clone(want) // already sorted: the linear fast path
		}
		for coarse := range 7 { // full, then cut at k[0], k[1], k[2], twice
			got := sortKeyed(slices.Clone(ks))
			if coarse > 0 {
				sc := scratch{coarse: 1 + (coarse-1)%3, coarseBits: []uint{coarseRho, coarseTime}[(coarse-1)/3]}
				got = sc.sort(slices.Clone(ks))
			}
			for i := range got {
				if got[i].Job != want[i].job || got[i].Queue != int(want[i].queue) {
					t.Fatalf("trial %d (coarse %d): position %d is %s, want %s", trial, coarse, i, got[i].Job.ID, want[i].job.ID)
				}
			}
		}
	}
}

// compareSubmit is bySubmit as a three-way comparison, NaN submit times
// and equal IDs included.
func TestCompareSubmitIsBySubmit(t *testing.T) {
	subs := []float64{0, 1, math.NaN(), math.Inf(1), math.Copysign(0, -1)}
	idsOf := []string{"", "a", "b", "ab"}
	for _, sa := range subs {
		for _, sb := range subs {
			for _, ia := range idsOf {
				for _, ib := range idsOf {
					a, b := &policy.Job{ID: ia, Submit: sa}, &policy.Job{ID: ib, Submit: sb}
					want := 0
					if bySubmit(a, b) {
						want = -1
					} else if bySubmit(b, a) {
						want = 1
					}
					if got := compareSubmit(a, b); got != want {
						t.Fatalf("compareSubmit(%v %q, %v %q) = %d, want %d", sa, ia, sb, ib, got, want)
					}
				}
			}
		}
	}
}
