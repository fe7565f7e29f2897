package order

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
			if trial%4 >= 2 {
				ks[i].queue = 0 // fair's keys: k[0] is sorted last (and cut)
			}
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

// compareSubmit is a total order on (Submit, ID), NaN submit times
// (after every number) and -0 included: antisymmetric, transitive, and
// by Submit, then ID, where the Submits are numbers.
func TestCompareSubmitIsTotal(t *testing.T) {
	subs := []float64{0, 1, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}
	ids := []string{"", "a", "b", "ab"}
	var js []*policy.Job
	for _, s := range subs {
		for _, id := range ids {
			js = append(js, &policy.Job{ID: id, Submit: s})
		}
	}
	for _, a := range js {
		for _, b := range js {
			ab, ba := compareSubmit(a, b), compareSubmit(b, a)
			if ab != -ba {
				t.Fatalf("compareSubmit(%v %q, %v %q) = %d but reversed %d", a.Submit, a.ID, b.Submit, b.ID, ab, ba)
			}
			if !math.IsNaN(a.Submit) && !math.IsNaN(b.Submit) {
				want := strings.Compare(a.ID, b.ID)
				if a.Submit < b.Submit {
					want = -1
				} else if a.Submit > b.Submit {
					want = 1
				}
				if ab != want {
					t.Fatalf("compareSubmit(%v %q, %v %q) = %d, want %d", a.Submit, a.ID, b.Submit, b.ID, ab, want)
				}
			} else if math.IsNaN(a.Submit) != math.IsNaN(b.Submit) && (ab < 0) != math.IsNaN(b.Submit) {
				t.Fatalf("compareSubmit(%v, %v) = %d: a NaN Submit must sort last", a.Submit, b.Submit, ab)
			}
			for _, c := range js {
				if ab <= 0 && compareSubmit(b, c) <= 0 && compareSubmit(a, c) > 0 {
					t.Fatalf("not transitive: %v %q ≤ %v %q ≤ %v %q", a.Submit, a.ID, b.Submit, b.ID, c.Submit, c.ID)
				}
			}
		}
	}
}
