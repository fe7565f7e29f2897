package place

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// TestTakeSplitSameAsSerial: a gang filled in parts side by side
// (takeSplit) is the serial take's, slot for slot, in every candidate
// order consolidate uses; and where a candidate claims more workers than
// its node gives (take then packs what each gives), takeSplit declines
// and take's serial result stands.
func TestTakeSplitSameAsSerial(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(old int) { takeSplitMin = old }(takeSplitMin)
	s := pt.Random(9, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 4, NodesPerRack: 10, GPUsPerNode: 8},
		Running: 300, Busy: 0.6, FracShare: 0.6})
	c := policy.NewCapacity(&s.Cluster)
	rng := rand.New(rand.NewPCG(5, 6))
	split, declined := 0, 0
	for range 200 {
		d := policy.Demand{Workers: 1 + rng.IntN(300), Fraction: []float64{1, 0.5, 0.25, 0.75}[rng.IntN(4)],
			MemMiB: int64(rng.IntN(3)) * 1024}
		cs := candidates(c, d)
		byFitDesc(cs)
		orders := [][]candidate{cs, groupByRack(c, cs)}
		if len(cs) > 0 { // a node claiming more than it hosts
			bad := append([]candidate(nil), cs...)
			bad[rng.IntN(len(bad))].fit += 3
			orders = append(orders, bad)
		}
		for o, order := range orders {
			takeSplitMin = 1 << 30
			want, wantOK := take(c, d, order)
			takeSplitMin = 1
			got, gotOK := take(c, d, order)
			if !reflect.DeepEqual(want.Slots, got.Slots) || wantOK != gotOK {
				t.Fatalf("%v, order %d: serial %d slots (%v), in parts %d (%v)", d, o, len(want.Slots), wantOK, len(got.Slots), gotOK)
			}
			if _, ok := takeSplit(c, d, order); ok {
				split++
			} else if o == 2 {
				declined++
			}
		}
	}
	if split == 0 || declined == 0 {
		t.Fatalf("takeSplit filled %d gangs and declined %d: a path went untested", split, declined)
	}
}
