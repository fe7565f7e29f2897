package policy_test

import (
	"fmt"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// The consolidated placer writes its gangs through a GangWriter, and a
// commit takes the slots' GPUs as written instead of resolving them by
// name. Every test of this package checks each such gang against resolve
// (export_test.go); here the decisions and the capacity they leave are
// those of an instance that resolves every gang, round after round of
// churned snapshots, with shares in quarters and with shares that round,
// lazy trials and eager ones, and the commits did take written gangs.
func TestWrittenGangsSameDecisions(t *testing.T) {
	defer policy.GangNotesOff(false)
	for _, eager := range []bool{false, true} {
		for _, name := range []string{"fifo", "srtf-oracle", "tiresias-las", "tiresias-gittins", "lucid"} {
			before, checked := policy.WrittenGangs(), policy.CheckedGangs()
			for seed := uint64(1); seed <= 4; seed++ {
				writtenAgree(t, name, seed, eager)
			}
			if policy.WrittenGangs() == before {
				t.Errorf("%s (eager %v): no commit took a written gang", name, eager)
			}
			if policy.CheckedGangs() == checked {
				t.Errorf("%s (eager %v): no commit took a gang its writer checked", name, eager)
			}
		}
	}
}

// gpuCluster is nodes nodes of 8 idle 16 GiB GPUs, perRack to a rack.
func gpuCluster(nodes, perRack int) policy.Cluster {
	var cl policy.Cluster
	for i := range nodes {
		n := policy.Node{Name: fmt.Sprintf("node-%04d", i), Rack: fmt.Sprintf("r%d", i/perRack), LinkGbps: 10}
		for k := range 8 {
			n.GPUs = append(n.GPUs, policy.GPU{Index: k, Model: "sim", MemoryMiB: 16384})
		}
		cl.Nodes = append(cl.Nodes, n)
	}
	return cl
}

// writtenAgree decides 10 churned rounds of one seed with and without
// the writers' refs, failing on any difference.
func writtenAgree(t *testing.T, name string, seed uint64, eager bool) {
	c, with, without := churnedPair(t, name, seed, eager)
	for round := 0; round < 10; round++ {
		c.Step(decideBoth(t, name, seed, round, c.S, with, without, policy.GangNotesOff))
	}
}

// A gang large enough to be written in parts side by side (8,200 workers
// of half a GPU on 520 nodes) starts with its GPUs as written, the same
// as resolved: the start, and the capacity it leaves.
func TestWrittenGiantSameStart(t *testing.T) {
	defer policy.GangNotesOff(false)
	s := &policy.Snapshot{Now: 100, Cluster: gpuCluster(520, 40), Jobs: []*policy.Job{
		{ID: "giant", State: policy.Queued, Workers: 8200, Fraction: 0.5, Submit: 1},
		{ID: "small", State: policy.Queued, Workers: 3, Fraction: 0.25, Submit: 2},
	}}
	states := map[bool]string{}
	for _, off := range []bool{true, false} {
		policy.GangNotesOff(off)
		before := policy.WrittenGangs()
		p := newPolicy(t, "fifo")
		d := p.Decide(s)
		if len(d.Starts) != 2 || len(d.Starts[0].Placement.Slots) != 8200 {
			t.Fatalf("notes off %v: starts %d, want the giant and the small gang", off, len(d.Starts))
		}
		states[off] = policy.FreeState(p.(*policy.Framework))
		if written := policy.WrittenGangs() - before; off != (written == 0) {
			t.Fatalf("notes off %v: %d commits took written gangs", off, written)
		}
	}
	if states[true] != states[false] {
		t.Fatal("the giant left a different capacity written than resolved")
	}
}
