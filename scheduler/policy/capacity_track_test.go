package policy

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestResetTrackedMatchesNew: a Capacity reset from a cluster that tracks
// its changes (Cluster.Gen) re-reads only changed nodes, yet equals a
// fresh Capacity over many rounds of commits, releases and usage changes
// (including rounds fed an untracked copy of the same cluster).
func TestResetTrackedMatchesNew(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := testCluster("a1", "a2", "b1", "b2", "c1")
	c.Gen = make([]uint64, len(c.Nodes))
	cp := NewCapacity(c)
	for round := range 300 {
		// the round: commit or release on random GPUs of the capacity
		for range rng.IntN(3) {
			n := c.Nodes[rng.IntN(len(c.Nodes))]
			p := Placement{Slots: []Slot{{Node: n.Name, GPU: rng.IntN(2), Fraction: 0.25, MemMiB: 10}}}
			if rng.IntN(2) == 0 {
				_ = cp.Commit(p, 0.1)
			} else {
				cp.Release(p, 0.1)
			}
		}
		// the producer changes some nodes' usage, bumping their Gen
		for range rng.IntN(3) {
			i, g := rng.IntN(len(c.Nodes)), rng.IntN(2)
			c.Nodes[i].GPUs[g].UsedFraction = float64(rng.IntN(5)) * 0.25
			c.Nodes[i].GPUs[g].UsedMemoryMiB = int64(rng.IntN(5)) * 100
			c.Gen[i]++
		}
		in := c
		if round%7 == 3 {
			in = &Cluster{Nodes: append([]Node(nil), c.Nodes...)} // untracked copy
		}
		cp = cp.Reset(in)
		want := NewCapacity(c)
		if !reflect.DeepEqual(cp.Nodes, want.Nodes) || cp.WholeFree() != want.WholeFree() ||
			cp.FreeSum() != want.FreeSum() || cp.Epoch != 0 {
			t.Fatalf("round %d: tracked Reset differs from NewCapacity:\n got %+v\nwant %+v", round, cp.Nodes, want.Nodes)
		}
	}
}
