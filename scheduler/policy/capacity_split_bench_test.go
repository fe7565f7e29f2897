package policy

import "testing"

// BenchmarkGiantPasses times the per-slot passes over an 80,000-slot
// gang's placement on 10,000 nodes of 8 GPUs (resolve, the over-commit
// check, a commit and release with the digest and recording on, a victim's
// comparison), each serially and in parts side by side, in one run: a
// slot of half a GPU on every GPU (spread), and four of a quarter on two
// GPUs a node (packed, as the consolidated placer packs a fractional
// giant). The data stays in cache from one iteration to the next, where a
// decision meets it cold: the ratios here are the floor of what parts buy.
func BenchmarkGiantPasses(b *testing.B) {
	cl := splitTestCluster(10000, 8)
	layouts := map[string]Placement{}
	for _, layout := range []string{"spread", "packed"} {
		var p Placement
		for i := range cl.Nodes {
			for k := range 8 {
				s := Slot{Node: cl.Nodes[i].Name, GPU: k, Fraction: 0.5, MemMiB: 1024}
				if layout == "packed" {
					s.GPU, s.Fraction = k/4, 0.25
				}
				p.Slots = append(p.Slots, s)
			}
		}
		layouts[layout] = p
	}
	defer func(s, r int) { splitMin, rereadMin = s, r }(splitMin, rereadMin)
	for _, layout := range []string{"spread", "packed"} {
		b.Run(layout, func(b *testing.B) { giantPasses(b, cl, layouts[layout]) })
	}
}

// giantPasses is BenchmarkGiantPasses of one layout p on cl.
func giantPasses(b *testing.B, cl *Cluster, p Placement) {
	for _, mode := range []string{"serial", "parts"} {
		splitMin = map[string]int{"serial": 1 << 30, "parts": 8192}[mode]
		rereadMin = map[string]int{"serial": 1 << 30, "parts": 1024}[mode]
		c := NewCapacity(cl)
		c.LogChanges()
		c.hashOn()
		refs, _ := c.resolve(p, nil)
		vr := &victimRef{refs: refs, shares: sharesOf(nil, p.Slots)}
		b.Run("resolve/"+mode, func(b *testing.B) {
			for range b.N {
				refs, _ = c.resolve(p, refs[:0])
			}
		})
		b.Run("over/"+mode, func(b *testing.B) {
			for range b.N {
				if err := c.overCommitted(p, refs); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("commit-release/"+mode, func(b *testing.B) {
			for range b.N {
				c.beginRecord()
				c.apply(p, refs, -1, 0.5)
				c.apply(p, refs, +1, 0.5)
				c.endRecord(nil)
			}
		})
		b.Run("same/"+mode, func(b *testing.B) {
			for range b.N {
				if !vr.same(c, p.Slots) {
					b.Fatal("the slots differ")
				}
			}
		})
	}
}
