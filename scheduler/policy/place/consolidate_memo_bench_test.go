package place

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// BenchmarkMemoCatchUpAfterGiant times what a giant gang's preemption
// costs the placer's memos at 10,000 nodes of 8 GPUs: an 80,000-worker
// gang of a quarter GPU (four to a GPU, on two GPUs of every node, the
// other six partly used) is released and committed back, and after each
// the memos of the churned benchmark's 18 one-worker shapes (a quarter,
// half or three quarters of a GPU, 1-6 GiB) catch up on the 10,000 nodes
// it changed: 360,000 refiles an iteration (every eighth iteration the
// log, bounded, restarts, and each memo is rebuilt by a full scan, as a
// placer would).
func BenchmarkMemoCatchUpAfterGiant(b *testing.B) {
	cl := &policy.Cluster{}
	for i := range 10000 {
		n := policy.Node{Name: fmt.Sprintf("n%05d", i), Rack: fmt.Sprintf("r%d", i/40), LinkGbps: 10}
		for k := range 8 {
			n.GPUs = append(n.GPUs, policy.GPU{Index: k, Model: "sim", MemoryMiB: 16384})
		}
		cl.Nodes = append(cl.Nodes, n)
	}
	c := policy.NewCapacity(cl)
	rng := rand.New(rand.NewPCG(1, 2))
	var giant, rest policy.Placement
	for _, n := range cl.Nodes {
		for k := range 8 {
			if k < 2 {
				for range 4 {
					giant.Slots = append(giant.Slots, policy.Slot{Node: n.Name, GPU: k, Fraction: 0.25, MemMiB: 2048})
				}
				continue
			}
			for range rng.IntN(4) {
				rest.Slots = append(rest.Slots, policy.Slot{Node: n.Name, GPU: k, Fraction: 0.25, MemMiB: 1024 * int64(1+rng.IntN(3))})
			}
		}
	}
	for _, p := range []policy.Placement{rest, giant} {
		if err := c.Commit(p, 0); err != nil {
			b.Fatal(err)
		}
	}
	c.LogChanges()
	var shapes []policy.Demand
	for _, f := range []float64{0.25, 0.5, 0.75} {
		for g := int64(1); g <= 6; g++ {
			d := policy.Demand{Workers: 1, Fraction: f, MemMiB: 1024 * g}
			remember(c, d, candidates(c, d))
			shapes = append(shapes, d)
		}
	}
	catchUp := func() {
		for _, d := range shapes {
			if fits(c, d) == nil { // the log restarted (bounded): a full scan
				remember(c, d, candidates(c, d))
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		c.Release(giant, 0)
		catchUp()
		if err := c.Commit(giant, 0); err != nil {
			b.Fatal(err)
		}
		catchUp()
	}
}
