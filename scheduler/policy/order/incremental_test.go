package order

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// listedJobs builds n jobs in (Submit, ID) order with random states,
// service and (for some) a queue-join time after a preemption; submit
// times repeat so ID ties matter.
func listedJobs(rng *rand.Rand, n int) []*policy.Job {
	js := make([]*policy.Job, n)
	for i := range js {
		j := &policy.Job{ID: fmt.Sprintf("j%05d", i), Submit: float64(i / 3), Workers: 1, Fraction: 1}
		j.QueuedSince = j.Submit
		j.OracleDuration = float64(rng.IntN(5000))
		j.Attained = []float64{0, 100, 4000, 9000}[rng.IntN(4)]
		if rng.IntN(3) == 0 {
			j.State = policy.Running
		}
		if rng.IntN(5) == 0 {
			j.QueuedSince = j.Submit + float64(rng.IntN(n))
		}
		if rng.IntN(20) == 0 {
			j.State = policy.Finished
		}
		js[i] = j
	}
	return js
}

// The listed-order fast path of 2D-LAS ranks exactly as the full sort.
func TestLASListedOrderMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		js := listedJobs(rng, 1+rng.IntN(300))
		fast, slow := mustLAS(t), mustLAS(t)
		a := ids(fast.Order(&policy.Snapshot{Now: 1e6, Jobs: js, SubmitOrdered: true}))
		b := ids(slow.Order(&policy.Snapshot{Now: 1e6, Jobs: js}))
		if !slices.Equal(a, b) {
			t.Fatalf("round %d: listed order %v\nsorted %v", round, a, b)
		}
	}
}

func mustLAS(t *testing.T) *LAS {
	l, err := NewLAS(QueueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The same for 2D-Gittins, whose fresh jobs share one index.
func TestGittinsListedOrderMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	prior := []float64{100, 1000, 5000, 20000}
	for round := 0; round < 200; round++ {
		js := listedJobs(rng, 1+rng.IntN(300))
		fast, _ := NewGittins(GittinsConfig{Prior: prior})
		slow, _ := NewGittins(GittinsConfig{Prior: prior})
		a := ids(fast.Order(&policy.Snapshot{Now: 1e6, Jobs: js, SubmitOrdered: true}))
		b := ids(slow.Order(&policy.Snapshot{Now: 1e6, Jobs: js}))
		if !slices.Equal(a, b) {
			t.Fatalf("round %d: listed order %v\nsorted %v", round, a, b)
		}
	}
}

// evolve changes a listed snapshot as a replay does between events: some
// jobs start, stop (re-queued now), finish or gain service, new ones
// arrive at the end.
func evolve(rng *rand.Rand, js []*policy.Job, now float64, next *int) []*policy.Job {
	var out []*policy.Job
	for _, j := range js {
		switch r := rng.IntN(40); {
		case r == 0:
			continue // finished and compacted away
		case r == 1 && j.State == policy.Running:
			j.State, j.QueuedSince = policy.Queued, now
		case r == 2 && j.State == policy.Queued:
			j.State = policy.Running
		case r < 6 && j.State == policy.Running:
			j.Attained += float64(rng.IntN(3000))
			j.Executed += float64(rng.IntN(1000))
		case r == 7:
			j.State = policy.Finished // listed but finished
		}
		out = append(out, j)
	}
	for k := rng.IntN(4); k > 0; k-- {
		*next++
		out = append(out, &policy.Job{ID: fmt.Sprintf("j%05d", *next), Submit: now, QueuedSince: now, Workers: 1, Fraction: 1})
	}
	return out
}

// Incremental ranking across a sequence of evolving snapshots matches a
// fresh full sort at every step, for 2D-LAS, 2D-Gittins and SRTF.
func TestIncrementalOrderMatchesSortOverTime(t *testing.T) {
	prior := []float64{100, 1000, 5000, 20000}
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		js := listedJobs(rng, 200)
		next := len(js)
		las := mustLAS(t)
		git, _ := NewGittins(GittinsConfig{Prior: prior})
		var learned []float64
		srtf := NewSRTFOracle()
		for step := 0; step < 60; step++ {
			now := 1e6 + float64(step)
			s := &policy.Snapshot{Now: now, Jobs: js, SubmitOrdered: true}
			ref := &policy.Snapshot{Now: now, Jobs: js}
			if a, b := ids(las.Order(s)), ids(mustLAS(t).Order(ref)); !slices.Equal(a, b) {
				t.Fatalf("seed %d step %d: las incremental %v\nsorted %v", seed, step, a, b)
			}
			if step%7 == 3 { // the distribution learns: indexes change
				learned = append(learned, float64(500*(step+1)))
				git.ObserveFinished(&policy.Job{Attained: learned[len(learned)-1]})
			}
			if a, b := ids(srtf.Order(s)), ids(NewSRTFOracle().Order(ref)); !slices.Equal(a, b) {
				t.Fatalf("seed %d step %d: srtf incremental %v\nsorted %v", seed, step, a, b)
			}
			fresh, _ := NewGittins(GittinsConfig{Prior: append(slices.Clone(prior), learned...)})
			if a, b := ids(git.Order(s)), ids(fresh.Order(ref)); !slices.Equal(a, b) {
				t.Fatalf("seed %d step %d: gittins incremental %v\nsorted %v", seed, step, a, b)
			}
			js = evolve(rng, js, now+1, &next)
		}
	}
}
