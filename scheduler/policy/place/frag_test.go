package place

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Node c has one whole GPU; node d has [0.5, 0.5, 1, 1] free. With half and
// whole-GPU requests equally popular, a quarter GPU on c turns c's whole GPU
// into a fragment (growth 0.375) while on d GPU 0 it changes nothing (the
// 0.25 left joins the already fragmented half): FGD picks d and keeps c's
// GPU whole; consolidated best-fit picks c, the node with least left over.
func fragCluster() policy.Cluster {
	gpu := func(i int, used float64) policy.GPU {
		return policy.GPU{Index: i, MemoryMiB: 16384, UsedFraction: used}
	}
	return policy.Cluster{Nodes: []policy.Node{
		{Name: "c", Rack: "r", GPUs: []policy.GPU{gpu(0, 0)}},
		{Name: "d", Rack: "r", GPUs: []policy.GPU{gpu(0, 0.5), gpu(1, 0.5), gpu(2, 0), gpu(3, 0)}},
	}}
}

func TestFragKeepsWholeGPUsFree(t *testing.T) {
	cl := fragCluster()
	fr := NewFrag(FragConfig{Prior: []TaskType{{Fraction: 0.5, GPUs: 1, Weight: 1}, {Fraction: 1, GPUs: 1, Weight: 1}}})
	j := &policy.Job{ID: "q", Workers: 1, Fraction: 0.25}
	c := policy.NewCapacity(&cl)
	p := placeOn(t, fr, c, j)
	if p.Slots[0].Node != "d" || p.Slots[0].GPU > 1 {
		t.Fatalf("FGD should use a half-used GPU on d, got %+v", p.Slots[0])
	}
	if c.WholeFree() != 3 {
		t.Errorf("whole GPUs left %d, want 3", c.WholeFree())
	}
	c2 := policy.NewCapacity(&cl)
	if q := placeOn(t, NewConsolidated(), c2, j); q.Slots[0].Node != "c" || c2.WholeFree() != 2 {
		t.Fatalf("premise: consolidated breaks c's whole GPU, got %+v", q.Slots[0])
	}
}

func TestFragScoreByHand(t *testing.T) {
	types := []TaskType{{Fraction: 0.5, GPUs: 1, Weight: 0.5}, {Fraction: 1, GPUs: 1, Weight: 0.5}}
	for _, c := range []struct {
		free []float64
		want float64
	}{
		{[]float64{1}, 0},
		{[]float64{0.75}, 0.5 * 0.75},                     // whole: all 0.75; half: fits → 0
		{[]float64{0.25, 0.5, 1, 1}, 0.5*0.75 + 0.5*0.25}, // whole: partials .75; half: the .25
		{[]float64{0.25, 0.25}, 0.5},                      // nothing fits: all of it, both types
	} {
		if got := fragOf(c.free, types); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("frag(%v) = %g, want %g", c.free, got, c.want)
		}
	}
}

func TestFragLearnsRequestSizes(t *testing.T) {
	fr := NewFrag(FragConfig{PriorWeight: 1})
	var jobs []*policy.Job
	for i := 0; i < 9; i++ {
		jobs = append(jobs, &policy.Job{ID: string(rune('a' + i)), Workers: 1, Fraction: 0.5, State: policy.Queued})
	}
	fr.ObserveSnapshot(&policy.Snapshot{Jobs: jobs})
	for _, tt := range fr.Types() {
		if tt.Fraction == 0.5 && math.Abs(tt.Weight-0.9) > 1e-12 {
			t.Fatalf("half-GPU weight %g, want 0.9 (9 of 10 with the prior)", tt.Weight)
		}
	}
}
