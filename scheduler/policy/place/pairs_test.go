package place

import (
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// tablePairs is a hand-written slowdown table by model: key "a|b" is a's
// slowdown beside b; missing pairs cannot share.
type tablePairs map[string]float64

func (t tablePairs) Slowdown(a, b *policy.Job) (float64, bool) {
	s, ok := t[a.Model+"|"+b.Model]
	return s, ok
}

func (tablePairs) Class(j *policy.Job) uint32 { return uint32(len(j.Model)) + uint32(j.Model[0]) }

// halfJob is a single-GPU job that may share its GPU (fraction 0.5).
func halfJob(id, model string) *policy.Job {
	return &policy.Job{ID: id, Model: model, Workers: 1, Fraction: 0.5, MemMiB: 1000, Submit: 1}
}

// twoShared is one node with GPU 0 holding job A and GPU 1 holding job B,
// each on half a GPU, and GPU 2 empty when empty is set.
func twoShared(empty bool) (policy.Cluster, []*policy.Job) {
	n := 2
	if empty {
		n = 3
	}
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: n, GPUMemMiB: 16000})
	a, b := halfJob("a", "A"), halfJob("b", "B")
	for g, j := range []*policy.Job{a, b} {
		j.State = policy.Running
		pt.Run(&cl, j, policy.Placement{Slots: []policy.Slot{{Node: "r0n0", GPU: g, Fraction: 0.5, MemMiB: 1000}}})
	}
	return cl, []*policy.Job{a, b}
}

func boundedOn(t *testing.T, pairs tablePairs, bound float64, cl policy.Cluster, running []*policy.Job, j *policy.Job) (policy.Placement, string) {
	t.Helper()
	pl := NewInterference(InterferenceConfig{Pairs: pairs, SlowdownBound: bound})
	c := policy.NewCapacity(&cl)
	c.TrackResidents(running)
	d, err := policy.DemandOf(j)
	if err != nil {
		t.Fatal(err)
	}
	return pl.Place(j, d, c)
}

// C beside A: C 1.2×, A 1.8× (A breaks 1.5); beside B: 1.3× and 1.4×.
// Only GPU 1 keeps both under the bound.
func TestBoundedJoinsOnlyPairsUnderBound(t *testing.T) {
	pairs := tablePairs{"C|A": 1.2, "A|C": 1.8, "C|B": 1.3, "B|C": 1.4}
	cl, run := twoShared(false)
	p, why := boundedOn(t, pairs, 1.5, cl, run, halfJob("c", "C"))
	if why != "" || p.Slots[0].GPU != 1 {
		t.Fatalf("want GPU 1 (1.3×, 1.4× ≤ 1.5), got %+v %q", p, why)
	}
	// At bound 2.0 both GPUs qualify; A's GPU comes first in node order.
	if p, _ := boundedOn(t, pairs, 2.0, cl, run, halfJob("c", "C")); p.Slots[0].GPU != 0 {
		t.Fatalf("bound 2.0: want GPU 0, got %+v", p)
	}
	// At 1.35, B's 1.4× breaks it too: no GPU, and the reason says so.
	_, why = boundedOn(t, pairs, 1.35, cl, run, halfJob("c", "C"))
	if !strings.Contains(why, "predicted slowdown ≤ 1.35") {
		t.Fatalf("want a bound reason, got %q", why)
	}
}

// A pair the predictor cannot judge never shares: the job takes the
// empty GPU instead, and waits when there is none.
func TestBoundedUnknownPairTakesEmptyGPU(t *testing.T) {
	pairs := tablePairs{"C|A": 1.1} // A|C unknown
	cl, run := twoShared(true)
	if p, why := boundedOn(t, pairs, 1.5, cl, run, halfJob("c", "C")); why != "" || p.Slots[0].GPU != 2 {
		t.Fatalf("want the empty GPU 2, got %+v %q", p, why)
	}
	cl, run = twoShared(false)
	if _, why := boundedOn(t, pairs, 1.5, cl, run, halfJob("c", "C")); why == "" {
		t.Fatal("no GPU may take c")
	}
}

// Two workers of one gang on one GPU are a pair too: C beside C is 1.6×.
func TestBoundedGangSelfPair(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 2, GPUMemMiB: 16000})
	g := halfJob("g", "C")
	g.Workers = 2
	p, why := boundedOn(t, tablePairs{"C|C": 1.6}, 1.5, cl, nil, g)
	if why != "" || p.Slots[0].GPU == p.Slots[1].GPU {
		t.Fatalf("1.6× > 1.5: workers must not share, got %+v %q", p, why)
	}
	p, _ = boundedOn(t, tablePairs{"C|C": 1.2}, 1.5, cl, nil, g)
	if p.Slots[0].GPU != p.Slots[1].GPU {
		t.Fatalf("1.2× ≤ 1.5: workers pack onto one GPU, got %+v", p)
	}
}

// Through the framework: the residents of a decision include jobs it
// started itself, so the second of two C jobs does not join the first
// (C beside C is 1.7×) but a D does (1.1×, 1.2×).
func TestBoundedFrameworkSeesStartsOfTheRound(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 2, GPUMemMiB: 16000})
	pairs := tablePairs{"C|C": 1.7, "C|D": 1.1, "D|C": 1.2}
	c1, c2, d := halfJob("c1", "C"), halfJob("c2", "C"), halfJob("d", "D")
	c2.Submit, d.Submit = 2, 3
	f := policy.NewFramework(order.NewFIFO(order.FIFOConfig{Backfill: true}), NewInterference(InterferenceConfig{Pairs: pairs}))
	if f.Name() != "fifo+interference-bounded" {
		t.Fatalf("name %q", f.Name())
	}
	dec := f.Decide(&policy.Snapshot{Cluster: cl, Jobs: []*policy.Job{c1, c2, d}})
	gpu := map[string]int{}
	for _, s := range dec.Starts {
		gpu[s.JobID] = s.Placement.Slots[0].GPU
	}
	if len(gpu) != 3 || gpu["c1"] == gpu["c2"] || gpu["d"] != gpu["c1"] {
		t.Fatalf("want c1 and c2 apart and d beside c1, got %v", gpu)
	}
}

// Without a predictor the placer is the utilisation-threshold one.
func TestNoPairsKeepsUtilisationRule(t *testing.T) {
	pl := NewInterference(InterferenceConfig{})
	if pl.Name() != "interference-aware" || pl.TracksResidents() {
		t.Fatalf("name %q, tracks %v", pl.Name(), pl.TracksResidents())
	}
}
