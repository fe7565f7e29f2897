package order

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// withSplit runs f with every pass split across w workers down to a few
// items each (w = 1: serial), and restores the defaults.
func withSplit(w int, f func()) {
	g, pw := parGrain, parWorkers
	defer func() { parGrain, parWorkers = g, pw }()
	parGrain, parWorkers = 3, w
	if w == 1 {
		parGrain = math.MaxInt32
	}
	f()
}

// The split passes (tracked keys, the orderings' own key loops, the
// radix passes, the tie runs, the ranking) decide exactly as the serial
// ones: the same Starts, Preempts, Waiting and Ranking every round of a
// churning tracked and untracked sequence, for 2 to 5 workers.
func TestSplitPassesSameDecisions(t *testing.T) {
	prior := spreadPrior()
	orderings := map[string]func() policy.Orderer{
		"fifo":  func() policy.Orderer { return NewFIFO(FIFOConfig{Backfill: true}) },
		"las":   func() policy.Orderer { o, _ := NewLAS(DefaultQueueConfig()); return o },
		"srtf":  func() policy.Orderer { return NewSRTFOracle() },
		"fair":  func() policy.Orderer { o, _ := NewFair(FairConfig{}); return o },
		"lucid": func() policy.Orderer { o, _ := NewLucid(LucidConfig{}); return o },
		"gittins": func() policy.Orderer {
			o, _ := NewGittins(GittinsConfig{QueueConfig: DefaultQueueConfig(), Prior: prior})
			return o
		},
	}
	for name, mk := range orderings {
		for seed := uint64(1); seed <= 4; seed++ {
			for _, tracked := range []bool{true, false} {
				sameSplit(t, name, mk, seed, tracked, tracked && seed%2 == 1)
			}
		}
	}
}

func sameSplit(t *testing.T, name string, mk func() policy.Orderer, seed uint64, tracked, accrue bool) {
	t.Helper()
	sp := pt.RandomSpec{
		Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 4, GPUsPerNode: 8},
		Running: 60 + int(seed*17%50), Queued: 150 + int(seed*31%200),
		Busy: []float64{0.5, 0.8, 0.95, 1}[seed%4], FracShare: []float64{0, 0.3}[seed%2],
	}
	s := pt.Random(seed, sp)
	c := pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 60 + float64(seed%3)*400, Finish: 0.2, Arrive: 12, Jobs: sp, Accrue: accrue})
	serial := policy.NewFramework(mk(), place.NewConsolidated())
	split := policy.NewFramework(mk(), place.NewConsolidated())
	for round := 0; round < 10; round++ {
		gen := s.JobGen
		if !tracked {
			s.JobGen = nil
		}
		var want, got policy.Decision
		withSplit(1, func() { want = serial.Decide(s) })
		withSplit(2+int(seed+uint64(round))%4, func() { got = split.Decide(s) })
		s.JobGen = gen
		if !reflect.DeepEqual(want.Starts, got.Starts) || !reflect.DeepEqual(want.Preempts, got.Preempts) ||
			!slices.Equal(want.Waiting, got.Waiting) || !slices.Equal(want.Ranking, got.Ranking) {
			t.Fatalf("%s seed=%d tracked=%v accrue=%v round %d: split passes decided otherwise:\n%v %v\nvs serial\n%v %v",
				name, seed, tracked, accrue, round, got.Starts, got.Ranking, want.Starts, want.Ranking)
		}
		want.Ranking, want.Waiting = slices.Clone(want.Ranking), slices.Clone(want.Waiting)
		c.Step(want)
	}
}

// The split radix sort, full and coarse, orders as the comparison it
// replaced, on keys full of ties (so runs straddle the workers' ranges).
func TestSplitSortMatchesComparator(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		ks := tiedKeys(rng, rng.IntN(400))
		want := slices.Clone(ks)
		slices.SortStableFunc(want, compareReference)
		for coarse := range 4 {
			var got []policy.Ranked
			withSplit(2+trial%4, func() {
				sc := scratch{coarse: coarse, coarseBits: coarseTime}
				got = sc.sort(slices.Clone(ks))
			})
			for i := range got {
				if got[i].Job != want[i].job {
					t.Fatalf("trial %d (coarse %d): position %d is %s, want %s", trial, coarse, i, got[i].Job.ID, want[i].job.ID)
				}
			}
		}
	}
}

// tiedKeys is n random keys full of ties: two queues, keys that are
// equal, nearly equal (1e-9 apart) or spread, equal Submit times and
// IDs.
func tiedKeys(rng *rand.Rand, n int) []keyed {
	ks := make([]keyed, n)
	for i := range ks {
		j := &policy.Job{ID: "j" + strconv.Itoa(rng.IntN(50)), Submit: float64(rng.IntN(3))}
		ks[i] = keyed{job: j, queue: int32(rng.IntN(2))}
		for k := range ks[i].k {
			switch rng.IntN(3) {
			case 0:
				ks[i].k[k] = float64(rng.IntN(3))
			case 1:
				ks[i].k[k] = 1000 + float64(rng.IntN(3))*1e-9
			default:
				ks[i].k[k] = rng.NormFloat64() * 1e6
			}
		}
	}
	return ks
}
