package policy

import "testing"

// TestLazyNodeNeedsExactFree: a lazy trial refuses a node holding a GPU
// whose Free is not dyadic (releasing a share onto it and re-committing
// it may round: 0.3+0.25-0.25 is 0.30000000000000004), and takes one
// whose Frees all are, relevant when it has a whole GPU.
func TestLazyNodeNeedsExactFree(t *testing.T) {
	c := NewCapacity(&Cluster{Nodes: []Node{
		{Name: "a", GPUs: []GPU{{Index: 0, UsedFraction: 0.5}, {Index: 1}}},
		{Name: "b", GPUs: []GPU{{Index: 0, UsedFraction: 0.5}, {Index: 1, UsedFraction: 1}}},
	}})
	c.Nodes[1].GPUs[0].Free = 0.3 // as a round's arithmetic can leave it
	summarise(&c.Nodes[1])
	var lz lazyTrial
	lz.marks.start(len(c.Nodes))
	if at, ok := lz.node(c, 0); !ok || !lz.nodes[at].relevant {
		t.Fatalf("node a (Frees 0.5 and 1): ok %v, relevant %v; want an exact, relevant node", ok, ok && lz.nodes[at].relevant)
	}
	if _, ok := lz.node(c, 1); ok {
		t.Fatal("node b holds a GPU with Free 0.3: a lazy trial must not take it")
	}
}
