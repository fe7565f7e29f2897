package live

import (
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

func TestResumedWorkersKeepTheirNodes(t *testing.T) {
	g := gang{Workers: []worker{{Group: "a"}, {Group: "b"}, {Group: "c"}}, Fraction: 1}
	prev := []target{
		{Worker: worker{Group: "a"}, NodeID: "n2", GPU: 0},
		{Worker: worker{Group: "b"}, NodeID: "n1", GPU: 1},
		{Worker: worker{Group: "c"}, NodeID: "n9", GPU: 0}, // node gone
	}
	p := policy.Placement{Slots: []policy.Slot{{Node: "n1", GPU: 0}, {Node: "n1", GPU: 1}, {Node: "n2", GPU: 0}}}
	got := keepCheckpoints(g, p, prev)
	want := []policy.Slot{{Node: "n2", GPU: 0}, {Node: "n1", GPU: 1}, {Node: "n1", GPU: 0}}
	if !reflect.DeepEqual(got.Slots, want) {
		t.Fatalf("slots %+v, want %+v", got.Slots, want)
	}
	if fresh := keepCheckpoints(g, p, nil); !reflect.DeepEqual(fresh, p) {
		t.Fatalf("a job never run before was reordered: %+v", fresh)
	}
}
