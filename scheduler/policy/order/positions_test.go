package order

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// unlisted evolves an unordered job list as a live scheduler's does
// between rounds: most jobs keep their position and keys, some change
// state or service, a few swap places, leave or arrive (at any position),
// and some arrivals duplicate another job's (ID, Submit).
func unlisted(rng *rand.Rand, js []*policy.Job, now float64, next *int) []*policy.Job {
	out := evolve(rng, js, now, next)
	for k := rng.IntN(3); k > 0 && len(out) > 1; k-- {
		a, b := rng.IntN(len(out)), rng.IntN(len(out))
		out[a], out[b] = out[b], out[a]
	}
	if rng.IntN(4) == 0 && len(out) > 0 {
		d := *out[rng.IntN(len(out))]
		d.State = policy.Queued
		at := rng.IntN(len(out) + 1)
		out = slices.Insert(out, at, &d)
	}
	return out
}

// Ranking an unordered snapshot incrementally (jobs matched by position)
// gives exactly a fresh full sort's order, duplicates included, for every
// ordering that re-ranks incrementally.
func TestIncrementalByPositionMatchesSort(t *testing.T) {
	prior := []float64{100, 1000, 5000, 20000}
	type pair struct {
		name     string
		inc      policy.Orderer
		newFresh func() policy.Orderer
	}
	for seed := uint64(0); seed < 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		js := listedJobs(rng, 150+rng.IntN(300))
		rng.Shuffle(len(js), func(a, b int) { js[a], js[b] = js[b], js[a] })
		next := 100000
		git, _ := NewGittins(GittinsConfig{Prior: prior})
		fair, _ := NewFair(FairConfig{})
		ps := []pair{
			{"las", mustLAS(t), func() policy.Orderer { return mustLAS(t) }},
			{"srtf", NewSRTFOracle(), func() policy.Orderer { return NewSRTFOracle() }},
			{"gittins", git, func() policy.Orderer { g, _ := NewGittins(GittinsConfig{Prior: prior}); return g }},
			{"fair", fair, func() policy.Orderer { f, _ := NewFair(FairConfig{}); return f }},
			{"fifo", NewFIFO(FIFOConfig{}), func() policy.Orderer { return NewFIFO(FIFOConfig{}) }},
		}
		for step := 0; step < 40; step++ {
			s := &policy.Snapshot{Now: 1e6 + float64(step%3), Jobs: js}
			for _, p := range ps {
				a := ptrs(p.inc.Order(s))
				b := ptrs(p.newFresh().Order(s))
				if !slices.Equal(a, b) {
					t.Fatalf("seed %d step %d: %s by position differs from a full sort", seed, step, p.name)
				}
			}
			js = unlisted(rng, js, 1e6+float64(step), &next)
		}
	}
}

func ptrs(rs []policy.Ranked) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%p/%d", r.Job, r.Queue)
	}
	return out
}
