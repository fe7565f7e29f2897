package split

import (
	"sync/atomic"
	"testing"
)

// Every item is visited exactly once, in its own part, whatever the
// number of parts and goroutines.
func TestRunVisitsEveryItemOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100, 1001} {
		for _, k := range []int{1, 2, 3, 16} {
			for _, g := range []int{1, 2, 5} {
				seen := make([]atomic.Int32, n)
				parts := make([]atomic.Int32, max(k, 1))
				Run(n, k, g, func(part, lo, hi int) {
					parts[part].Add(1)
					if wlo, whi := Range(part, max(k, 1), n); k > 1 && (lo != wlo || hi != whi) {
						t.Errorf("n=%d k=%d: part %d is [%d,%d), want [%d,%d)", n, k, part, lo, hi, wlo, whi)
					}
					for i := lo; i < hi; i++ {
						seen[i].Add(1)
					}
				})
				for i := range seen {
					if seen[i].Load() != 1 {
						t.Fatalf("n=%d k=%d g=%d: item %d visited %d times", n, k, g, i, seen[i].Load())
					}
				}
				for p := range parts {
					if parts[p].Load() != 1 {
						t.Fatalf("n=%d k=%d g=%d: part %d ran %d times", n, k, g, p, parts[p].Load())
					}
				}
			}
		}
	}
}
