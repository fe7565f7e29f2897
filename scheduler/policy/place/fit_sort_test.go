package place

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// byFitDesc's counting sort must give exactly the stable sort's order,
// and fillNode's sortedness shortcut the sorted GPUs' slots.
func TestByFitDescMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		n, spread := rng.IntN(400), 1+rng.IntN(40)
		cs := make([]candidate, n)
		for i := range cs {
			cs[i] = candidate{node: i, fit: rng.IntN(spread)}
			if trial%50 == 7 && i == n/2 {
				cs[i].fit = -1 // not a candidate fit: the plain sort
			}
		}
		want := slices.Clone(cs)
		slices.SortStableFunc(want, func(a, b candidate) int { return cmp.Compare(b.fit, a.fit) })
		byFitDesc(cs)
		if !slices.Equal(cs, want) {
			t.Fatalf("trial %d (%d candidates, fits < %d): order differs", trial, n, spread)
		}
	}
	frees := []float64{0, 0.25, 0.5, 0.5, 1}
	for trial := 0; trial < 200; trial++ {
		n := policy.FreeNode{Name: "n"}
		for k := 0; k < 1+rng.IntN(8); k++ {
			n.GPUs = append(n.GPUs, policy.FreeGPU{Index: k, Free: frees[rng.IntN(len(frees))], FreeMem: 1 << 14, TotalMem: 1 << 14})
		}
		d := policy.Demand{Workers: 1 + rng.IntN(8), Fraction: 0.25}
		order := make([]int, len(n.GPUs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(n.GPUs[a].Free, n.GPUs[b].Free) })
		var want []policy.Slot
		k := d.Workers
		for _, gi := range order {
			for c := d.FitsOn(&n.GPUs[gi]); c > 0 && k > 0; c-- {
				want = append(want, d.Slot(n.Name, &n.GPUs[gi]))
				k--
			}
		}
		c := &policy.Capacity{Nodes: []policy.FreeNode{n}}
		if got := fillNode(c, 0, d, d.Workers).Slots; !slices.Equal(got, want) {
			t.Fatalf("trial %d: fillNode %v, want %v", trial, got, want)
		}
	}
}
