package policy_test

import (
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
)

// Where victims share GPUs, a trial preempts the lowest-ranked victims
// that make room, not any the batch that fitted released. Four victims
// in one 2D-LAS queue, lowest
// first: A and B share node a's GPUs with jobs ranked above the queued
// gang (no whole GPU either way), C holds b's GPU 0, D c's GPU 0. The
// batch of four frees b's and c's, and the placer (whole-sum: the node
// with the most free) takes c, D's, though C ranks below D; the fewest
// victims that fit are A, B and C, and C alone is preempted. The old
// rule (preempt D) fails it, lazy and eager.
func TestTrialPreemptsLowestThatFit(t *testing.T) {
	checkVictims(t, fewestSnapshot, "C", "b", 1)
}

// checkVictims decides snap's round by 2D-LAS and the whole-sum placer,
// with lazy trials and eager ones: the queued gang q must start on node,
// preempting the one job victim, with narrowed victims given back.
func checkVictims(t *testing.T, snap func() *policy.Snapshot, victim, node string, narrowed int) {
	t.Helper()
	for _, eager := range []bool{false, true} {
		las, err := order.NewLAS(order.QueueConfig{})
		if err != nil {
			t.Fatal(err)
		}
		f := policy.NewFramework(las, wholeSumPlacer{})
		f.EagerTrials = eager
		d := f.Decide(snap())
		if !slices.Equal(d.Preempts, []string{victim}) || len(d.Starts) != 1 || d.Starts[0].Placement.Slots[0].Node != node {
			t.Errorf("eager %v: preempted %v, started %+v; want %s preempted and q on %s", eager, d.Preempts, d.Starts, victim, node)
		}
		if st := f.LastTrialStats(); st.Narrowed != narrowed {
			t.Errorf("eager %v: %d victims narrowed off, want %d", eager, st.Narrowed, narrowed)
		}
	}
}

// fewestSnapshot is TestTrialPreemptsLowestThatFit's cluster: three
// nodes of two GPUs, the high-ranked jobs (little service) in the first
// queue beside the queued gang, the victims deep in the last.
func fewestSnapshot() *policy.Snapshot {
	s := usedSnapshot(map[string][]float64{"a": {1, 1}, "b": {1, 0.5}, "c": {1, 0.25}})
	run := func(id, node string, gpu int, share, attained, since float64) {
		j := &policy.Job{ID: id, State: policy.Running, Workers: 1, Fraction: share, Submit: 1,
			QueuedSince: since, Attained: attained, Executed: attained}
		j.Placement.Slots = []policy.Slot{{Node: node, GPU: gpu, Fraction: share}}
		s.Jobs = append(s.Jobs, j)
	}
	run("hi0", "a", 0, 0.5, 100, 1)
	run("hi1", "a", 1, 0.5, 100, 2)
	run("hiY", "b", 1, 0.5, 100, 3)
	run("hiZ", "c", 1, 0.25, 100, 4)
	// one queue, ranked by the time they joined it: D first, A last
	run("D", "c", 0, 1, 1e9, 10)
	run("C", "b", 0, 1, 1e9, 11)
	run("B", "a", 1, 0.5, 1e9, 12)
	run("A", "a", 0, 0.5, 1e9, 13)
	s.Jobs = append(s.Jobs, &policy.Job{ID: "q", Workers: 1, Fraction: 1, State: policy.Queued, Submit: 500, QueuedSince: 500})
	return s
}

// Where every victim holds whole GPUs, the batch that fitted stays
// released and the placer chooses among them: a 2-GPU gang, victims A, B,
// C of one GPU and D of two (lowest first: A). A's and B's release free
// no node's two GPUs; C's frees b's pair, D's c's pair beside c's free
// third GPU, and the whole-sum placer takes c (three free) over b. D
// alone is preempted where the fewest victims (A, B, C) would preempt B
// and C: the doubling batch buys the placer its choice of node, which the
// speed-aware placers use (network-aware), and whole-GPU victims did not
// cascade (preempt_fewest.go).
func TestTrialWholeVictimsKeepPlacerChoice(t *testing.T) {
	checkVictims(t, wholeVictimsSnapshot, "D", "c", 0)
}

// wholeVictimsSnapshot is TestTrialWholeVictimsKeepPlacerChoice's
// cluster: a with A and a job ranked above the gang, b with B and C, c
// with D on two GPUs and a third free.
func wholeVictimsSnapshot() *policy.Snapshot {
	s := usedSnapshot(map[string][]float64{"a": {1, 1}, "b": {1, 1}, "c": {1, 1, 0}})
	run := func(id, node string, gpus []int, attained, since float64) {
		j := &policy.Job{ID: id, State: policy.Running, Workers: len(gpus), Fraction: 1, Submit: 1,
			QueuedSince: since, Attained: attained, Executed: attained}
		for _, g := range gpus {
			j.Placement.Slots = append(j.Placement.Slots, policy.Slot{Node: node, GPU: g, Fraction: 1})
		}
		s.Jobs = append(s.Jobs, j)
	}
	run("hi", "a", []int{1}, 100, 1)
	run("D", "c", []int{0, 1}, 1e9, 10)
	run("C", "b", []int{1}, 1e9, 11)
	run("B", "b", []int{0}, 1e9, 12)
	run("A", "a", []int{0}, 1e9, 13)
	s.Jobs = append(s.Jobs, &policy.Job{ID: "q", Workers: 2, Fraction: 1, State: policy.Queued, Submit: 500, QueuedSince: 500})
	return s
}

// usedSnapshot is a snapshot at 1000 s of nodes a, b and c in one rack,
// with their GPUs (16 GB) used as given.
func usedSnapshot(used map[string][]float64) *policy.Snapshot {
	s := &policy.Snapshot{Now: 1000}
	for _, name := range []string{"a", "b", "c"} {
		n := policy.Node{Name: name, Rack: "r"}
		for k, u := range used[name] {
			n.GPUs = append(n.GPUs, policy.GPU{Index: k, MemoryMiB: 16000, UsedFraction: u})
		}
		s.Cluster.Nodes = append(s.Cluster.Nodes, n)
	}
	return s
}
