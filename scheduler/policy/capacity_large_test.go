package policy

import (
	"fmt"
	"strings"
	"testing"
)

// A gang larger than smallGang commits, releases and is refused exactly
// as a small one: every slot counted once per GPU, the first
// over-committed GPU (in slot order) named.
func TestCommitLargeGang(t *testing.T) {
	cp := NewCapacity(largeGangCluster())
	var p Placement
	for n := 0; n < 20; n++ {
		for g := 0; g < 4; g++ {
			for w := 0; w < 2; w++ { // two half workers per GPU
				p.Slots = append(p.Slots, Slot{Node: fmt.Sprintf("n%02d", n), GPU: g, Fraction: 0.5, MemMiB: 100})
			}
		}
	}
	if err := cp.Commit(p, 0); err != nil {
		t.Fatal(err)
	}
	if cp.FreeSum() > eps || cp.WholeFree() != 0 {
		t.Fatalf("after committing every GPU: free %v, whole %d", cp.FreeSum(), cp.WholeFree())
	}
	cp.Release(p, 0)
	if cp.WholeFree() != 80 {
		t.Fatalf("after release: whole %d, want 80", cp.WholeFree())
	}
	over := Placement{Slots: append([]Slot(nil), p.Slots...)}
	over.Slots = append(over.Slots, Slot{Node: "n07", GPU: 2, Fraction: 0.5})
	err := cp.Commit(over, 0)
	if err == nil || !strings.Contains(err.Error(), "n07 GPU 2 over-committed") {
		t.Fatalf("over-committed large gang: %v", err)
	}
	if cp.WholeFree() != 80 {
		t.Fatal("a refused commit changed capacity")
	}
}

// A large gang whose slots interleave nodes (each node's wants are
// chained, not contiguous) sums each GPU's slots and names the first
// over-committed GPU in order of first appearance.
func TestCommitLargeGangInterleaved(t *testing.T) {
	cp := NewCapacity(largeGangCluster())
	var p Placement
	for w := 0; w < 2; w++ { // two half workers per GPU, node after node
		for g := 0; g < 4; g++ {
			for n := 0; n < 20; n++ {
				p.Slots = append(p.Slots, Slot{Node: fmt.Sprintf("n%02d", n), GPU: g, Fraction: 0.5, MemMiB: 100})
			}
		}
	}
	if err := cp.Commit(p, 0); err != nil {
		t.Fatal(err)
	}
	cp.Release(p, 0)
	over := Placement{Slots: append([]Slot(nil), p.Slots...)}
	over.Slots = append(over.Slots, Slot{Node: "n11", GPU: 3, Fraction: 0.5}, Slot{Node: "n03", GPU: 1, Fraction: 0.5})
	// n03 GPU 1 appears before n11 GPU 3 in the gang, so it is named first
	if err := cp.Commit(over, 0); err == nil || !strings.Contains(err.Error(), "n03 GPU 1 over-committed") {
		t.Fatalf("over-committed interleaved gang: %v", err)
	}
	if cp.WholeFree() != 80 {
		t.Fatal("a refused commit changed capacity")
	}
}

// largeGangCluster is 20 nodes of 4 GPUs with 1,000 MiB each, one rack:
// room for a gang past smallGang.
func largeGangCluster() *Cluster {
	c := &Cluster{}
	for n := 0; n < 20; n++ {
		node := Node{Name: fmt.Sprintf("n%02d", n), Rack: "r"}
		for g := 0; g < 4; g++ {
			node.GPUs = append(node.GPUs, GPU{Index: g, MemoryMiB: 1000})
		}
		c.Nodes = append(c.Nodes, node)
	}
	return c
}
