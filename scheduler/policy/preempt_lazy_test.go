package policy_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// Lazy trials (preempt_lazy.go) release in the Capacity only the victims
// a whole-GPU gang's placer can see, so they change no decision and no
// capacity: an instance with them and one without decide the same
// churned snapshots (Starts, Preempts, Waiting, Ranking) and leave the
// same capacity every round, bit for bit (GPU Util, which neither moves,
// and the Epoch, which counts releases, not compared: a lazy trial that
// counts fits releases fewer victims, preempt_fit.go). Clusters of whole GPUs only, of
// quarter shares (released and re-committed exactly: victims are kept
// out of the Capacity) and of shares whose sums round (the lazy mode must
// give up and release them).
func TestLazyTrialsSameDecisions(t *testing.T) {
	defer policy.VerifyTruncate(func(err error) { t.Fatal("narrowing:", err) })()
	defer policy.FitJumpsOff(false)
	for _, off := range []bool{true, false} { // the bisection's truncates, and the counted prefix's
		policy.FitJumpsOff(off)
		var adds, kept, truncated int64
		var narrowed int
		for _, name := range []string{"tiresias-gittins", "tiresias-las", "srtf-oracle"} {
			for seed := uint64(1); seed <= 6; seed++ {
				with := lazyAgainstEager(t, name, seed, 12, seed > 4, func(f *policy.Framework) {
					narrowed += f.LastTrialStats().Narrowed
				})
				a, k := policy.LazyCounts(with)
				adds, kept = adds+a, kept+k
				truncated += policy.LazyTruncated(with)
			}
		}
		t.Logf("fit jumps off %v: %d victims released virtually, %d of them never in the Capacity; %d given back narrowing, %d of them materialised",
			off, adds, kept, narrowed, truncated)
		if kept == 0 {
			t.Error("no trial kept a victim out of the Capacity: the lazy path went untested")
		}
		if off && truncated == 0 {
			t.Error("no lazy trial narrowed past a materialised victim: truncate went untested")
		}
	}
}

// A victim holding more slots than lazyMaxSlots ends a lazy trial: its
// pending victims are released and the trial goes on eagerly, with the
// same decisions and capacity as an eager instance's (the benchmark's
// 80,001-slot giants are cheaper released at once).
func TestLazyTrialsGiveUpOnLargeVictims(t *testing.T) {
	defer policy.LazyMaxSlots(2)()
	var tooLarge, kept int64
	for _, name := range []string{"tiresias-gittins", "tiresias-las", "srtf-oracle"} {
		for seed := uint64(1); seed <= 3; seed++ {
			with := lazyAgainstEager(t, name, seed, 8, false, nil)
			_, k := policy.LazyCounts(with)
			tooLarge, kept = tooLarge+policy.LazyTooLarge(with), kept+k
		}
	}
	if tooLarge == 0 || kept == 0 {
		t.Fatalf("%d victims too large, %d kept out lazily: both paths must run", tooLarge, kept)
	}
}

// lazyAgainstEager decides seed's churned snapshot (shares that round
// where rounding) with name, lazily and eagerly side by side, for rounds
// rounds, and fails where their decisions or the capacities they leave
// differ; each, unless nil, sees the lazy instance after each decision.
// It returns the lazy instance.
func lazyAgainstEager(t *testing.T, name string, seed uint64, rounds int, rounding bool, each func(*policy.Framework)) *policy.Framework {
	t.Helper()
	s := pt.Random(seed, pt.RandomSpec{
		Cluster: pt.ClusterSpec{Racks: 4, NodesPerRack: 8, GPUsPerNode: 8},
		Running: 500, Queued: 800, Busy: 0.95, FracShare: []float64{0, 0.3, 0.6}[seed%3],
	})
	if rounding {
		roundingShares(s)
	}
	c := pt.NewChurn(seed, s, pt.ChurnSpec{Interval: 10, Finish: 0.02, Arrive: 10})
	with, without := newPolicy(t, name).(*policy.Framework), newPolicy(t, name).(*policy.Framework)
	without.EagerTrials = true
	for round := 0; round < rounds; round++ {
		want := copyOf(without.Decide(c.S))
		got := with.Decide(c.S)
		sameDecision(t, name, round, want, got)
		if each != nil {
			each(with)
		}
		if policy.FreeGPUs(with) != policy.FreeGPUs(without) { // counted trials release fewer: Epoch differs
			t.Fatalf("%s seed %d round %d: the rounds left different capacities", name, seed, round)
		}
		c.Step(want)
	}
	return with
}

// wholeSumPlacer is a WholeSighted placer that reads what such a placer
// may: for a whole-GPU gang it picks, of the nodes holding a whole GPU,
// the one with the largest FreeSum (the first on ties), and places there
// or fails.
type wholeSumPlacer struct{ defaultShaped }

// defaultShaped gives the test placers the default demand shape.
type defaultShaped struct{}

func (defaultShaped) Shape(_ *policy.Job, d policy.Demand) policy.ShapeKey {
	return policy.DefaultShape(d)
}

func (wholeSumPlacer) Name() string             { return "whole-sum" }
func (wholeSumPlacer) SeesWholeNodesOnly() bool { return true }
func (wholeSumPlacer) Place(_ *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	best := -1
	for i := range c.Nodes {
		if n := &c.Nodes[i]; n.WholeFree > 0 && (best < 0 || n.FreeSum > c.Nodes[best].FreeSum) {
			best = i
		}
	}
	if best < 0 || c.Nodes[best].WholeFree < d.Workers {
		return policy.Placement{}, "no room"
	}
	var p policy.Placement
	for _, g := range c.Nodes[best].GPUs {
		if g.Whole() && len(p.Slots) < d.Workers {
			p.Slots = append(p.Slots, d.Slot(c.Nodes[best].Name, &g))
		}
	}
	return p, ""
}

// fitSumPlacer is a FitSighted placer that reads what such a placer
// may: for a fractional gang it picks, of the nodes hosting a worker,
// the one with the largest FreeSum (the first on ties), and places there
// or fails.
type fitSumPlacer struct{ defaultShaped }

func (fitSumPlacer) Name() string               { return "fit-sum" }
func (fitSumPlacer) SeesFittingNodesOnly() bool { return true }
func (fitSumPlacer) Place(_ *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	hosts := func(n *policy.FreeNode) (k int) {
		for i := range n.GPUs {
			k += d.FitsOn(&n.GPUs[i])
		}
		return k
	}
	best := -1
	for i := range c.Nodes {
		if n := &c.Nodes[i]; hosts(n) > 0 && (best < 0 || n.FreeSum > c.Nodes[best].FreeSum) {
			best = i
		}
	}
	if best < 0 || hosts(&c.Nodes[best]) < d.Workers {
		return policy.Placement{}, "no room"
	}
	var p policy.Placement
	for _, g := range c.Nodes[best].GPUs {
		for k := d.FitsOn(&g); k > 0 && len(p.Slots) < d.Workers; k-- {
			p.Slots = append(p.Slots, d.Slot(c.Nodes[best].Name, &g))
		}
	}
	return p, ""
}

// lazyCase is a cluster of (node, GPUs' used fractions), running victims
// (lowest ranked last) and one queued gang (of whole GPUs, or of
// fraction each) that ranks above them, decided by 2D-LAS with lazy
// trials on and off.
type lazyCase struct {
	name     string
	nodes    map[string][]float64 // used fraction per GPU
	usedMem  map[string]int64     // memory used on every GPU of a node
	victims  []lazyVictimSpec
	workers  int
	fraction float64
	placer   policy.Placer
}

type lazyVictimSpec struct {
	node  string
	gpus  []int
	share float64
}

func (lc lazyCase) snapshot() *policy.Snapshot {
	s := &policy.Snapshot{Now: 1000}
	for _, name := range []string{"a", "b", "c"} {
		used, ok := lc.nodes[name]
		if !ok {
			continue
		}
		n := policy.Node{Name: name, Rack: "r"}
		for k, u := range used {
			n.GPUs = append(n.GPUs, policy.GPU{Index: k, MemoryMiB: 16000, UsedFraction: u, UsedMemoryMiB: lc.usedMem[name]})
		}
		s.Cluster.Nodes = append(s.Cluster.Nodes, n)
	}
	for i, v := range lc.victims {
		j := &policy.Job{ID: "v" + string(rune('0'+i)), Workers: len(v.gpus), Fraction: v.share, State: policy.Running,
			Submit: 1, QueuedSince: float64(10 + i), Attained: 1e9, Executed: 1e6}
		for _, g := range v.gpus {
			j.Placement.Slots = append(j.Placement.Slots, policy.Slot{Node: v.node, GPU: g, Fraction: v.share})
		}
		s.Jobs = append(s.Jobs, j)
	}
	frac := lc.fraction
	if frac == 0 {
		frac = 1
	}
	s.Jobs = append(s.Jobs, &policy.Job{ID: "q", Workers: lc.workers, Fraction: frac, State: policy.Queued, Submit: 500, QueuedSince: 500})
	return s
}

// TestLazyTrialsKeepTheirTerms decides trials where lazy releases must
// not be used, or must see a node through its whole GPUs or through the
// GPUs that host a fractional worker: each case fails if its rule is
// dropped (a placer reading a node's FreeSum; a
// cluster total that rounds, a victim whose share rounds, one whose
// release clamps), because the trial then leaves another capacity or
// another decision than releasing every victim does. (A node whose own
// Free rounds is refused too, TestLazyNodeNeedsExactFree: a cluster's
// Frees, 1 − used, are multiples of 2^-53 that dyadic shares add to
// exactly, so no snapshot reaches that rule alone.)
func TestLazyTrialsKeepTheirTerms(t *testing.T) {
	cases := []lazyCase{{
		// a's victims free no whole GPU, but a has one already: the
		// placer reads a's FreeSum, so they must be released with b's
		name:  "a node with a whole GPU is seen",
		nodes: map[string][]float64{"a": {0, 1, 1, 1}, "b": {1, 1, 1, 1}},
		victims: []lazyVictimSpec{{"b", []int{0}, 1}, {"b", []int{1}, 1},
			{"a", []int{1}, 0.5}, {"a", []int{2}, 0.5}, {"a", []int{3}, 0.5}},
		workers: 2, placer: wholeSumPlacer{},
	}, {
		// the same for a fractional gang: a hosts one worker of half a
		// GPU before any release, and its victims (released first) free
		// no GPU to host another, but the placer reads a's FreeSum, so
		// they must be out when b's victim makes b host the gang: a
		// then still has the larger sum, and the trial fails
		name:  "a node hosting a worker is seen",
		nodes: map[string][]float64{"a": {0.5, 1, 1, 1}, "b": {1, 0.5}},
		victims: []lazyVictimSpec{{"b", []int{0}, 0.5},
			{"a", []int{1}, 0.25}, {"a", []int{2}, 0.25}, {"a", []int{3}, 0.25}},
		workers: 2, fraction: 0.5, placer: fitSumPlacer{},
	}, {
		// the victim's node is exact, but the cluster total 0.5+0.4 is
		// not: releasing and re-committing leaves it 0.8999999999999999
		name:    "a cluster total that rounds",
		nodes:   map[string][]float64{"a": {0.5}, "c": {0.6}},
		victims: []lazyVictimSpec{{"a", []int{0}, 0.25}},
		workers: 1,
	}, {
		// 0.25+0.1-0.1 is 0.24999999999999997
		name:    "a share that rounds",
		nodes:   map[string][]float64{"a": {0.75}, "b": {0.5, 0.5}},
		victims: []lazyVictimSpec{{"a", []int{0}, 0.1}},
		workers: 1,
	}, {
		// the GPU reports less used than its job holds (and memory used
		// outside): releasing clamps at a whole GPU's compute, and
		// re-committing leaves 0.25 where 0.5 was
		name:    "a release that clamps",
		nodes:   map[string][]float64{"a": {0.5}, "b": {0.5}},
		usedMem: map[string]int64{"a": 1000},
		victims: []lazyVictimSpec{{"a", []int{0}, 0.75}},
		workers: 1,
	}}
	for _, lc := range cases {
		t.Run(lc.name, func(t *testing.T) {
			pl := lc.placer
			if pl == nil {
				pl = place.NewConsolidated()
			}
			var states [2]string
			var decs [2]policy.Decision
			for k, off := range []bool{true, false} {
				las, err := order.NewLAS(order.QueueConfig{})
				if err != nil {
					t.Fatal(err)
				}
				f := policy.NewFramework(las, pl)
				f.EagerTrials = off
				decs[k] = copyOf(f.Decide(lc.snapshot()))
				states[k] = policy.FreeGPUs(f) // Epoch: see lazyAgainstEager
			}
			sameDecision(t, lc.name, 0, decs[0], decs[1])
			if states[0] != states[1] {
				t.Fatalf("the trials left different capacities:\n%s\n%s", states[0], states[1])
			}
		})
	}
}

// A lazy trial skips the flushes whose shortOf test must fail (the
// victims stay pending), yet a trial that fails with every victim
// released records the whole GPUs it freed for the failed-trial bound
// (preempt_bound.go) as an eager one does. Four 1-GPU gangs preempt
// first (each counted as a miss, so the bound stops counting and the
// next trial runs); then a 5-GPU gang's trial fails with four whole GPUs
// out (node b's stay shared with a job ranked above it), and the 4-GPU
// gang queued behind it is not bounded off: it preempts the last four
// one-GPU jobs. One instance each way.
func TestLazyTrialFailureBound(t *testing.T) {
	for _, eager := range []bool{false, true} {
		p := newPolicy(t, "tiresias-las")
		p.(*policy.Framework).EagerTrials = eager
		d := p.Decide(failedBoundSnapshot())
		var started []string
		for _, st := range d.Starts {
			started = append(started, st.JobID)
		}
		if !slices.Equal(started, []string{"q1", "q2", "q3", "q4", "g4"}) || len(d.Preempts) != 8 || slices.Contains(d.Preempts, "lob") {
			t.Errorf("eager %v: started %v, preempted %v; want q1..q4 and g4 started in place of the eight one-GPU jobs", eager, started, d.Preempts)
		}
	}
}

// failedBoundSnapshot is three nodes of four GPUs: a and c held by
// one-GPU jobs deep in the last 2D-LAS queue, b shared by a job that
// ranks above every queued one (running, first queue) and one as deep as
// a's, half a GPU each; queued, four 1-GPU gangs, a 5-GPU gang and then
// a 4-GPU gang.
func failedBoundSnapshot() *policy.Snapshot {
	used := func() []policy.GPU {
		gs := make([]policy.GPU, 4)
		for i := range gs {
			gs[i] = policy.GPU{Index: i, UsedFraction: 1}
		}
		return gs
	}
	run := func(id, node string, gpus []int, frac, attained float64) *policy.Job {
		j := &policy.Job{ID: id, State: policy.Running, Workers: len(gpus), Fraction: frac, Attained: attained, Executed: attained}
		for _, g := range gpus {
			j.Placement.Slots = append(j.Placement.Slots, policy.Slot{Node: node, GPU: g, Fraction: frac})
		}
		return j
	}
	queued := func(id string, workers int, at float64) *policy.Job {
		return &policy.Job{ID: id, State: policy.Queued, Workers: workers, Fraction: 1, Submit: at, QueuedSince: at}
	}
	s := &policy.Snapshot{Now: 1000, Cluster: policy.Cluster{Nodes: []policy.Node{
		{Name: "a", Rack: "r", GPUs: used()}, {Name: "b", Rack: "r", GPUs: used()}, {Name: "c", Rack: "r", GPUs: used()},
	}}}
	s.Jobs = append(s.Jobs, run("hi", "b", []int{0, 1, 2, 3}, 0.5, 100), run("lob", "b", []int{0, 1, 2, 3}, 0.5, 1e5))
	for k := range 4 {
		s.Jobs = append(s.Jobs, run("lo"+strconv.Itoa(k), "a", []int{k}, 1, 1e5), run("lc"+strconv.Itoa(k), "c", []int{k}, 1, 1e5))
	}
	for k := range 4 {
		s.Jobs = append(s.Jobs, queued("q"+strconv.Itoa(k+1), 1, float64(k+1)))
	}
	s.Jobs = append(s.Jobs, queued("g5", 5, 10), queued("g4", 4, 20))
	return s
}
