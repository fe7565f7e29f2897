package fluid

import (
	"fmt"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

func cluster(nodes, gpus int) policy.Cluster {
	var c policy.Cluster
	for n := 0; n < nodes; n++ {
		node := policy.Node{Name: fmt.Sprint("n", n), Rack: "r"}
		for g := 0; g < gpus; g++ {
			node.GPUs = append(node.GPUs, policy.GPU{Index: g, MemoryMiB: 16000})
		}
		c.Nodes = append(c.Nodes, node)
	}
	return c
}

func newFluid(mode Mode) *Policy {
	return New(Config{Mode: mode}, policy.NewFramework(order.NewFIFO(order.FIFOConfig{}), place.NewConsolidated()))
}

// apply commits a decision to the snapshot as an executor would.
func apply(s *policy.Snapshot, d policy.Decision) {
	byID := map[string]*policy.Job{}
	for _, j := range s.Jobs {
		byID[j.ID] = j
	}
	use := func(pl policy.Placement, sign float64) {
		for _, sl := range pl.Slots {
			for n := range s.Cluster.Nodes {
				if s.Cluster.Nodes[n].Name != sl.Node {
					continue
				}
				g := &s.Cluster.Nodes[n].GPUs[sl.GPU]
				g.UsedFraction += sign * sl.Fraction
				g.UsedMemoryMiB += int64(sign) * sl.MemMiB
			}
		}
	}
	for _, id := range d.Preempts {
		j := byID[id]
		use(j.Placement, -1)
		j.State, j.Placement = policy.Queued, policy.Placement{}
	}
	for _, st := range d.Starts {
		j := byID[st.JobID]
		if j.State == policy.Running {
			use(j.Placement, -1)
		}
		use(st.Placement, 1)
		j.State, j.Placement = policy.Running, st.Placement
	}
}

func checkCluster(t *testing.T, c policy.Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		for _, g := range n.GPUs {
			if g.UsedFraction > 1+1e-9 || g.UsedMemoryMiB > g.MemoryMiB || g.UsedFraction < -1e-9 {
				t.Fatalf("%s GPU %d: fraction %.3f memory %d", n.Name, g.Index, g.UsedFraction, g.UsedMemoryMiB)
			}
		}
	}
}

// TestPolicyGroupAndOrdinaryJobs: an ordinary 2-GPU job takes its GPUs
// first; the tuning group's 9 small trials are packed on the other 6 GPUs
// (depth 2: 9 of 12 places), and when one finishes, the survivors stay
// where they are.
func TestPolicyGroupAndOrdinaryJobs(t *testing.T) {
	s := &policy.Snapshot{Cluster: cluster(2, 4)}
	s.Jobs = append(s.Jobs, &policy.Job{ID: "train", Workers: 2, Fraction: 1, MemMiB: 8000})
	for i := 0; i < 9; i++ {
		s.Jobs = append(s.Jobs, &policy.Job{ID: fmt.Sprint("trial-", i), Group: "hpo", Submit: 1, Workers: 1, Fraction: 1, MemMiB: 2000, Util: 0.3})
	}
	p := newFluid(WaterFill)
	d := p.Decide(s)
	apply(s, d)
	checkCluster(t, s.Cluster)
	running := 0
	for _, j := range s.Jobs {
		if j.State != policy.Running {
			t.Fatalf("%s not served: %v", j.ID, d.Waiting)
		}
		if j.Group != "" {
			running++
			if f := j.Placement.Slots[0].Fraction; f != 0.5 && f != 1 {
				t.Fatalf("%s fraction %v", j.ID, f)
			}
		}
	}
	before := map[string]policy.Slot{}
	for _, j := range s.Jobs[2:] {
		before[j.ID] = j.Placement.Slots[0]
	}
	s.Jobs[1].State = policy.Finished // trial-0 ends: release its share
	apply(s, policy.Decision{Preempts: []string{"trial-0"}})
	s.Jobs[1].State = policy.Finished
	d = p.Decide(s)
	apply(s, d)
	checkCluster(t, s.Cluster)
	moved := 0
	for _, j := range s.Jobs[2:] {
		if j.Placement.Slots[0].Node != before[j.ID].Node || j.Placement.Slots[0].GPU != before[j.ID].GPU {
			moved++
		}
	}
	if moved > 1 {
		t.Fatalf("%d trials moved after one finished", moved)
	}
}

// TestPolicyWithoutGroupsIsInner: with no tuning job, fluid decides
// exactly as its inner policy.
func TestPolicyWithoutGroupsIsInner(t *testing.T) {
	mk := func() *policy.Snapshot {
		s := &policy.Snapshot{Cluster: cluster(1, 4)}
		for i := 0; i < 3; i++ {
			s.Jobs = append(s.Jobs, &policy.Job{ID: fmt.Sprint("j", i), Submit: float64(i), Workers: 2, Fraction: 1})
		}
		return s
	}
	inner := policy.NewFramework(order.NewFIFO(order.FIFOConfig{}), place.NewConsolidated())
	want := inner.Decide(mk())
	got := newFluid(WaterFill).Decide(mk())
	if fmt.Sprint(got.Starts) != fmt.Sprint(want.Starts) || len(got.Waiting) != len(want.Waiting) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// TestPolicySpreadsFewTrials: 2 trials with perfect measured scaling on 8
// free GPUs get 4 workers each when elastic; the baseline gives one each.
func TestPolicySpreadsFewTrials(t *testing.T) {
	for _, mode := range []Mode{WaterFill, WholeGPU} {
		s := &policy.Snapshot{Cluster: cluster(2, 4)}
		for i := 0; i < 2; i++ {
			s.Jobs = append(s.Jobs, &policy.Job{ID: fmt.Sprint("t", i), Group: "g", Workers: 1, Fraction: 1, MinWorkers: 1, MaxWorkers: 8,
				StepTimes: map[int]policy.Seconds{1: 1, 2: 0.5, 4: 0.25}})
		}
		d := newFluid(mode).Decide(s)
		want := map[Mode]int{WaterFill: 4, WholeGPU: 1}[mode]
		for _, st := range d.Starts {
			if len(st.Placement.Slots) != want {
				t.Fatalf("%s: %s got %d workers, want %d", mode, st.JobID, len(st.Placement.Slots), want)
			}
		}
		apply(s, d)
		checkCluster(t, s.Cluster)
	}
}

func TestGroupOfDispatchedJobs(t *testing.T) {
	cases := map[string]string{
		"tune-digits/dispatch-t3-r1-1795465268-09082ae1": "tune-digits",
		"tune-digits/trial-t3-r1-0a1b2c3d":               "tune-digits",
		"train":                                          "",
		"/dispatch-x":                                    "",
		"nightly/periodic-1700000000":                    "",
	}
	for id, want := range cases {
		if got := GroupOf(&policy.Job{ID: id}); got != want {
			t.Errorf("GroupOf(%q) = %q, want %q", id, got, want)
		}
	}
	if got := GroupOf(&policy.Job{ID: "a/dispatch-1", Group: "explicit"}); got != "explicit" {
		t.Errorf("Job.Group must win, got %q", got)
	}
}

// TestPolicyKeepsTheLastPackedTrial: two trials packed on one GPU; when
// one ends, the survivor is left at its half if its utilisation fits it
// (a bigger share cannot speed it up, a restart costs), and widened to the
// whole GPU (a restart) if it is busier than its half.
func TestPolicyKeepsTheLastPackedTrial(t *testing.T) {
	for _, c := range []struct {
		util    float64
		restart bool
	}{{0.4, false}, {0.8, true}} {
		s := &policy.Snapshot{Cluster: cluster(1, 1)}
		for i := 0; i < 2; i++ {
			s.Jobs = append(s.Jobs, &policy.Job{ID: fmt.Sprint("t", i), Group: "g", Workers: 1, Fraction: 1, MemMiB: 1000, Util: c.util})
		}
		p := newFluid(WaterFill)
		d := p.Decide(s)
		apply(s, d)
		if len(d.Starts) != 2 || s.Jobs[1].Placement.Slots[0].Fraction != 0.5 {
			t.Fatalf("util %v: not packed: %+v", c.util, d)
		}
		apply(s, policy.Decision{Preempts: []string{"t0"}})
		s.Jobs[0].State = policy.Finished
		d = p.Decide(s)
		if restarted := len(d.Starts) == 1 && d.Starts[0].Placement.Slots[0].Fraction == 1; restarted != c.restart || len(d.Preempts) != 0 {
			t.Fatalf("util %v: decision %+v, want restart %v", c.util, d, c.restart)
		}
	}
}
