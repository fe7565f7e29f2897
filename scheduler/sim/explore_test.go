package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/colocate"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// flatPred predicts one slowdown for every pair (the probes' estimate).
type flatPred float64

func (f flatPred) Slowdown(colocate.Job, colocate.Job) float64 { return float64(f) }

// tablePairs are hand-set measured slowdowns by PairType, bound 1.5.
type tablePairs map[[2]string][2]float64

func (p tablePairs) Slowdowns(a, b string) (float64, float64, bool) {
	if s, ok := p[[2]string{a, b}]; ok {
		return s[0], s[1], true
	}
	if s, ok := p[[2]string{b, a}]; ok {
		return s[1], s[0], true
	}
	return 0, 0, false
}

func (tablePairs) Bound() float64 { return 1.5 }

// exploreFIFO is fifo+colocate-explore: probes estimated at est, window
// 300 s, restart cost 60 s, at most inFlight probes.
func exploreFIFO(t *testing.T, est float64, inFlight int) (policy.Policy, *colocate.ExplorePairs) {
	t.Helper()
	graphs, err := profile.GavelGraphs()
	if err != nil {
		t.Fatal(err)
	}
	cfg := colocate.DefaultExplore()
	cfg.MaxInFlight = inFlight
	ex, err := colocate.NewExplorePairs(colocate.PlacementPairs{Predictor: flatPred(est), Graphs: graphs}, 1.5, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := registry.Config{}
	rc.Interference.Pairs, rc.Interference.SlowdownBound = ex, 1.5
	p, err := registry.New("fifo+interference-bounded", rc)
	if err != nil {
		t.Fatal(err)
	}
	return p, ex
}

func gavelTyped(id string, submit, work float64, model string, batch int) Job {
	j := job(id, submit, work, 1)
	j.Fraction, j.Util = 0.5, 1
	j.Model, j.Features.BatchSize = model, float64(batch)
	j.PairType = profile.GavelType{Model: model, Batch: batch, Scale: 1}.String()
	return j
}

// One GPU, strict FIFO. a (ResNet-50) starts at 0 and b (LM) joins it
// as a probe; the pair measures 2.0 / 1.2, over 1.5. At 300 s the probe
// is judged: b goes back to the queue with the work it joined with plus
// 60 s (1,060 s); a has done 300/2 = 150 s and, b being known bad beside
// it, runs alone to 300 + 1,850 = 2,150 s. Then b starts alone and c
// (Transformer) joins it as a probe: 1.25 / 1.1, within the bound, so at
// 2,450 s it is kept. c ends at 2,150 + 1,000·1.1 = 3,250 s, when b has
// done 1,100/1.25 = 880 s; b ends alone 180 s later.
func TestExploreProbeEvictsBadKeepsGood(t *testing.T) {
	a := gavelTyped("a", 0, 2000, "ResNet-50", 64)
	b := gavelTyped("b", 0, 1000, "LM", 20)
	c := gavelTyped("c", 0, 1000, "Transformer", 64)
	pairs := tablePairs{
		{a.PairType, b.PairType}: {2.0, 1.2},
		{b.PairType, c.PairType}: {1.25, 1.1},
		{a.PairType, c.PairType}: {3.0, 3.0},
	}
	p, _ := exploreFIFO(t, 1.2, 1)
	r, err := Run(Config{Pairs: pairs, Check: true}, cluster(t, 1, 1), []Job{a, b, c}, p)
	if err != nil {
		t.Fatal(err)
	}
	got := jctOf(r)
	want := map[string]float64{"a": 2150, "c": 3250, "b": 3430}
	for id, w := range want {
		if !near(got[id], w) {
			t.Fatalf("JCTs %v, want %v", got, want)
		}
	}
	wc := Colocations{Measured: 2, OverBound: 1, Probes: 2, ProbesOver: 1, Evictions: 1, ProbeOverSeconds: 300}
	if r.Colocations != wc {
		t.Fatalf("colocations %+v, want %+v", r.Colocations, wc)
	}
	for _, j := range r.Jobs {
		if want := map[string]int{"b": 1}[j.ID]; j.Preemptions != want {
			t.Errorf("%s preempted %d times, want %d", j.ID, j.Preemptions, want)
		}
	}
}

// A probe whose pair parts before its window ends is judged then: it
// counts its time over the bound, evicts nobody, and the pair is known.
func TestExploreProbeEndsEarly(t *testing.T) {
	a := gavelTyped("a", 0, 1000, "ResNet-50", 64)
	b := gavelTyped("b", 0, 100, "LM", 20)
	pairs := tablePairs{{a.PairType, b.PairType}: {2.0, 1.6}}
	p, ex := exploreFIFO(t, 1.2, 1)
	r, err := Run(Config{Pairs: pairs, Check: true}, cluster(t, 1, 1), []Job{a, b}, p)
	if err != nil {
		t.Fatal(err)
	}
	// b finishes at 160 s, inside the window; a did 80 s meanwhile.
	if got := jctOf(r); !near(got["b"], 160) || !near(got["a"], 160+920) {
		t.Fatalf("JCTs %v", got)
	}
	wc := Colocations{Measured: 1, OverBound: 1, Probes: 1, ProbesOver: 1, ProbeOverSeconds: 160}
	if r.Colocations != wc {
		t.Fatalf("colocations %+v, want %+v", r.Colocations, wc)
	}
	if s, ok := ex.Slowdown(&policy.Job{ID: "x", Model: "LM", Features: policy.ModelFeatures{BatchSize: 20}},
		&policy.Job{ID: "y", Model: "ResNet-50", Features: policy.ModelFeatures{BatchSize: 64}}); !ok || math.Abs(s-1.6) > 1e-12 {
		t.Fatalf("LM beside ResNet-50 after the probe: %v %v, want the measured 1.6", s, ok)
	}
}

// exploreRandomRun plays random single-GPU jobs of the excerpt's V100
// types under fifo+colocate-explore with the invariants checked after
// every event (among them: no pair shares above the bound outside a probe
// window).
func exploreRandomRun(t *testing.T, g *profile.Gavel, seed uint64) *Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var jobs []Job
	for i := range 40 + rng.IntN(40) {
		submit := 0.0
		if rng.IntN(2) == 0 {
			submit = float64(rng.IntN(20000))
		}
		jobs = append(jobs, job(fmt.Sprintf("j%03d", i), submit, float64(60+rng.IntN(6000)), 1))
	}
	jobs, _, err := AssignGavel(jobs, GavelOptions{Types: g.Types("v100"), Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := exploreFIFO(t, 1+1.3*rng.Float64(), 1+rng.IntN(3))
	pairs := NewGavelPairs(g, "v100")
	pairs.Limit = 1.5
	r, err := Run(Config{Pairs: pairs, Check: true}, cluster(t, 1, 1+rng.IntN(6)), jobs, p)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if r.Metrics.Jobs != len(jobs) {
		t.Fatalf("seed %d: %d of %d jobs finished", seed, r.Metrics.Jobs, len(jobs))
	}
	return r
}

// On randomized runs no co-location stays above the bound past a probe
// window (Check fails the run otherwise; SustainedOver stays 0), every
// over-bound co-location is a probe, and a run is deterministic.
func TestExploreBoundOnRandomRuns(t *testing.T) {
	g, err := profile.LoadGavel(repo.TestData(t, "gavel-throughputs", "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var probes, failed int
	for seed := uint64(1); seed <= 30; seed++ {
		r := exploreRandomRun(t, g, seed)
		c := r.Colocations
		if c.SustainedOver != 0 || c.OverBound != c.ProbesOver || c.Evictions > c.ProbesOver {
			t.Fatalf("seed %d: %+v", seed, c)
		}
		probes, failed = probes+c.Probes, failed+c.ProbesOver
		again := exploreRandomRun(t, g, seed)
		if again.Colocations != c || again.Metrics != r.Metrics || !reflect.DeepEqual(again.Jobs, r.Jobs) {
			t.Fatalf("seed %d: two runs differ: %+v vs %+v", seed, c, again.Colocations)
		}
	}
	if probes == 0 || failed == 0 || failed == probes {
		t.Fatalf("the runs exercised too little: %d probes, %d over the bound", probes, failed)
	}
	t.Logf("%d probes, %d over the bound", probes, failed)
}

// lenient judges every probe good: the invariant must catch the pair it
// keeps above the bound.
type lenient struct{ *colocate.ExplorePairs }

func (l lenient) Measured(a, b *policy.Job, sa, sb float64) bool {
	l.ExplorePairs.Measured(a, b, sa, sb)
	return false
}

func TestExploreInvariantCatchesSustainedOver(t *testing.T) {
	a := gavelTyped("a", 0, 2000, "ResNet-50", 64)
	b := gavelTyped("b", 0, 1000, "LM", 20)
	pairs := tablePairs{{a.PairType, b.PairType}: {2.0, 1.2}}
	fresh := func() policy.Policy {
		_, ex := exploreFIFO(t, 1.2, 1)
		rc := registry.Config{}
		rc.Interference.Pairs = lenient{ex}
		p, err := registry.New("fifo+interference-bounded", rc)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, err := Run(Config{Pairs: pairs, Check: true}, cluster(t, 1, 1), []Job{a, b}, fresh())
	if err == nil || !strings.Contains(err.Error(), "above the bound") {
		t.Fatalf("a pair kept over the bound past its window: %v", err)
	}
	r, err := Run(Config{Pairs: pairs}, cluster(t, 1, 1), []Job{a, b}, fresh())
	if err != nil || r.Colocations.SustainedOver != 1 {
		t.Fatalf("unchecked: %v, %+v", err, r)
	}
}
