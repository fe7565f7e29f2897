package policy

import (
	"math"
	"testing"
)

// A round's shape memo hands every job of a shape the same entry, however
// many shapes share the cache in front of the map; NaN keys share nothing.
func TestShapeMemoSharesOneEntryPerShape(t *testing.T) {
	r := &round{shapes: map[shapeBits]*shapeMemo{}}
	var keys []ShapeKey
	for w := 1; w <= 40; w++ { // more shapes than the cache's slots can hold near one another
		for _, f := range []float64{0.25, 0.5, 0.75, 1} {
			keys = append(keys, ShapeKey{Workers: w, Fraction: f, MemMiB: int64(1024 * (w % 6))})
		}
	}
	first := map[ShapeKey]*shapeMemo{}
	for pass := 0; pass < 3; pass++ {
		for _, k := range keys {
			m := r.memo(k)
			if m == nil {
				t.Fatalf("no memo for %+v", k)
			}
			if pass == 0 {
				for k2, m2 := range first {
					if m2 == m {
						t.Fatalf("%+v and %+v share a memo", k, k2)
					}
				}
				first[k] = m
			} else if first[k] != m {
				t.Fatalf("pass %d: %+v got another memo", pass, k)
			}
		}
	}
	if len(r.shapes) != len(keys) {
		t.Fatalf("map holds %d shapes, want %d", len(r.shapes), len(keys))
	}
	// -0 and +0 are one shape
	if r.memo(ShapeKey{Workers: 1, Fraction: 1, Extra: 0}) != r.memo(ShapeKey{Workers: 1, Fraction: 1, Extra: math.Copysign(0, -1)}) {
		t.Fatal("-0 and +0 extra got different memos")
	}
	nan := ShapeKey{Workers: 1, Fraction: math.NaN()}
	if a, b := r.memo(nan), r.memo(nan); a == b {
		t.Fatal("a NaN shape shared its memo")
	}
}
