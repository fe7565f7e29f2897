package policy

import (
	"reflect"
	"testing"
)

func testCluster(names ...string) *Cluster {
	c := &Cluster{}
	for i, n := range names {
		c.Nodes = append(c.Nodes, Node{Name: n, Rack: "r" + n[:1], GPUs: []GPU{
			{Index: 0, MemoryMiB: 1000, UsedFraction: 0.5 * float64(i%3), UsedMemoryMiB: 100},
			{Index: 1, MemoryMiB: 1000},
		}})
	}
	return c
}

// TestResetMatchesNew: a reused Capacity is indistinguishable from a fresh
// one, whether the cluster kept its nodes (new usage) or changed them.
func TestResetMatchesNew(t *testing.T) {
	a := testCluster("a1", "a2", "b1")
	cp := NewCapacity(a)
	if err := cp.Commit(Placement{Slots: []Slot{{Node: "a1", GPU: 1, Fraction: 1, MemMiB: 10}}}, 0.3); err != nil {
		t.Fatal(err)
	}
	cp.Release(Placement{Slots: []Slot{{Node: "a2", GPU: 0, Fraction: 0.5}}}, 0)

	a.Nodes[2].GPUs[1].UsedFraction = 0.25 // same nodes, new usage
	for _, c := range []*Cluster{a, testCluster("a1", "b1"), testCluster("a1", "a2", "c1"), testCluster("a1", "a1", "b1")} {
		got, want := cp.Reset(c), NewCapacity(c)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Reset(%v):\n got %+v\nwant %+v", c.Nodes, got, want)
		}
		cp = got
	}
	var none *Capacity
	if !reflect.DeepEqual(none.Reset(a), NewCapacity(a)) {
		t.Fatal("nil Reset differs from NewCapacity")
	}
}
