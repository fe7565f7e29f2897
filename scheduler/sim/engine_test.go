package sim

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/profile"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

func job(id string, submit, dur float64, gpus int) Job {
	return Job{Job: trace.Job{ID: id, Submit: submit, Duration: dur, GPUs: gpus, Fraction: 1, Source: "test"}, Work: dur, Util: 1}
}

func cluster(t *testing.T, nodes, per int) policy.Cluster {
	t.Helper()
	c, err := Homogeneous(nodes, per, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func run(t *testing.T, c policy.Cluster, jobs []Job, p policy.Policy) *Result {
	t.Helper()
	r, err := Run(Config{Check: true}, c, jobs, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jctOf(r *Result) map[string]float64 {
	m := map[string]float64{}
	for _, j := range r.Jobs {
		m[j.ID] = j.JCT
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6*max(1, math.Abs(b)) }

func TestTwoJobsOneGPUFIFO(t *testing.T) {
	r := run(t, cluster(t, 1, 1), []Job{job("a", 0, 100, 1), job("b", 10, 50, 1)}, &testFIFO{})
	got := jctOf(r)
	// a runs 0..100; b waits until 100 and runs to 150: JCT 140.
	if !near(got["a"], 100) || !near(got["b"], 140) || !near(r.Metrics.AvgJCT, 120) {
		t.Fatalf("JCTs %v avg %v, want a=100 b=140 avg=120", got, r.Metrics.AvgJCT)
	}
	if !near(r.Metrics.Makespan, 150) || !near(r.Metrics.LongestWait, 90) || !near(r.Metrics.GPUAlloc, 1) {
		t.Fatalf("metrics %+v", r.Metrics)
	}
}

func TestGangWaitsForWholeGang(t *testing.T) {
	// 2 GPUs; a (1 GPU, 100 s) then b (2 GPUs, 10 s) then c (1 GPU, 10 s).
	// Strict FIFO: b waits for a; c waits behind b.
	jobs := []Job{job("a", 0, 100, 1), job("b", 1, 10, 2), job("c", 2, 10, 1)}
	got := jctOf(run(t, cluster(t, 1, 2), jobs, &testFIFO{}))
	if !near(got["a"], 100) || !near(got["b"], 109) || !near(got["c"], 118) {
		t.Fatalf("JCTs %v, want a=100 b=109 c=118", got)
	}
}

func profilesDirFor(t testing.TB) string { return repo.TestData(t, "model-profiles") }

func loadProfiles(dir string) (*profile.Set, error) { return profile.LoadSet(dir) }

func profiles(t *testing.T) *profile.Set {
	t.Helper()
	s, err := loadProfiles(profilesDirFor(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSpreadPlacementRunsSlower(t *testing.T) {
	m, _ := profiles(t).Get("imagenet")
	j := job("a", 0, 1000, 2)
	j.Speed = m
	// Two 2-GPU nodes: packed keeps the job on one node, spread splits it.
	packed := jctOf(run(t, cluster(t, 2, 2), []Job{j}, &testFIFO{}))["a"]
	spread := jctOf(run(t, cluster(t, 2, 2), []Job{j}, &testFIFO{spread: true}))["a"]
	want := 1000 * m.StepTime([]int{1, 1}) / m.StepTime([]int{2})
	if !near(packed, 1000) || !near(spread, want) || spread <= packed {
		t.Fatalf("packed %v (want 1000), spread %v (want %v)", packed, spread, want)
	}
}

func TestColocatedFractionsInterfere(t *testing.T) {
	a, b := job("a", 0, 100, 1), job("b", 0, 100, 1)
	a.Fraction, b.Fraction, a.Util, b.Util = 0.5, 0.5, 0.5, 0.5
	got := jctOf(run(t, cluster(t, 1, 1), []Job{a, b}, &testFIFO{}))
	if !near(got["a"], 105) || !near(got["b"], 105) {
		t.Fatalf("JCTs %v, want 105 each (factor max(1,1.0)·1.05)", got)
	}
	// Overloaded: demands 0.8 + 0.7 = 1.5 → factor 1.5·1.05 until one ends.
	a.Util, b.Util = 0.8, 0.7
	got = jctOf(run(t, cluster(t, 1, 1), []Job{a, b}, &testFIFO{}))
	if !near(got["a"], 157.5) {
		t.Fatalf("JCT %v, want 157.5", got["a"])
	}
}

func TestPolicyBugsAreErrors(t *testing.T) {
	jobs := []Job{job("a", 0, 10, 1), job("b", 0, 10, 1)}
	_, err := Run(Config{}, cluster(t, 1, 1), jobs, overAllocator{})
	if err == nil || !strings.Contains(err.Error(), "over-allocated") {
		t.Fatalf("over-allocation: err = %v", err)
	}
	_, err = Run(Config{}, cluster(t, 1, 1), jobs, badPreempter{})
	if err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("bad preempt: err = %v", err)
	}
}

func TestUnplaceableJobsAreReported(t *testing.T) {
	jobs := []Job{job("big", 0, 10, 8), job("a", 0, 10, 1)}
	r := run(t, cluster(t, 1, 2), jobs, &testFIFO{})
	if len(r.Unfit) != 1 || r.Unfit[0].ID != "big" || len(r.Jobs) != 1 {
		t.Fatalf("unfit %v, finished %d", r.Unfit, len(r.Jobs))
	}
	r = run(t, cluster(t, 1, 2), []Job{job("a", 0, 10, 1)}, neverStarts{})
	if len(r.Unfit) != 1 || !strings.Contains(r.Unfit[0].Reason, "never placed") {
		t.Fatalf("never-started job not reported: %+v", r.Unfit)
	}
}

func TestRestartPenalty(t *testing.T) {
	p := &preemptOnce{}
	jobs := []Job{job("a", 0, 100, 1)}
	r, err := Run(Config{RestartPenalty: 30, Quantum: 10, IdleQuanta: true, Check: true}, cluster(t, 1, 1), jobs, p)
	if err != nil {
		t.Fatal(err)
	}
	// Preempted at t=10 (10 s done), resumed at t=20 with 90+30 s left.
	if got := r.Jobs[0]; !near(got.JCT, 140) || got.Preemptions != 1 {
		t.Fatalf("job %+v, want JCT 140 and 1 preemption", got)
	}
}

// preemptOnce starts the job, preempts it at t=10, restarts it at t=20.
type preemptOnce struct{}

func (preemptOnce) Name() string { return "preempt-once" }
func (preemptOnce) Decide(s *policy.Snapshot) policy.Decision {
	j := s.Jobs[0]
	switch {
	case j.State == policy.Running && s.Now == 10:
		return policy.Decision{Preempts: []string{j.ID}}
	case j.State == policy.Queued && (s.Now == 0 || s.Now >= 20):
		return policy.Decision{Starts: []policy.Start{{JobID: j.ID, Placement: policy.Placement{Slots: []policy.Slot{{Node: s.Cluster.Nodes[0].Name, GPU: 0, Fraction: 1}}}}}}
	}
	return policy.Decision{}
}

func randomJobs(seed uint64, n int, prof *profile.Set) []Job {
	rng := rand.New(rand.NewPCG(seed, 1))
	names := prof.Names()
	out := make([]Job, n)
	for i := range out {
		g := []int{1, 1, 1, 2, 4, 8}[rng.IntN(6)]
		j := job(fmt.Sprintf("j%03d", i), float64(rng.IntN(3000)), float64(10+rng.IntN(2000)), g)
		j.Speed = prof.Models[names[rng.IntN(len(names))]]
		switch rng.IntN(4) {
		case 0:
			j.GPUs, j.Fraction, j.Util = 1, []float64{0.25, 0.5, 0.3}[rng.IntN(3)], rng.Float64()
		case 1:
			j.MinWorkers, j.MaxWorkers = 1, 2*g
		}
		out[i] = j
	}
	return out
}

func TestRandomizedInvariants(t *testing.T) {
	prof := profiles(t)
	for seed := uint64(1); seed <= 6; seed++ {
		jobs := randomJobs(seed, 120, prof)
		r, err := Run(Config{Check: true, RestartPenalty: 5}, cluster(t, 4, 4), jobs, &testChaos{rng: rand.New(rand.NewPCG(seed, 2))})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		seen := map[string]int{}
		for _, j := range r.Jobs {
			seen[j.ID]++
			if j.Finish < j.Start || j.Start < j.Submit {
				t.Fatalf("seed %d: job %+v out of order", seed, j)
			}
		}
		for _, u := range r.Unfit {
			seen[u.ID]++
		}
		for _, j := range jobs {
			if seen[j.ID] != 1 {
				t.Fatalf("seed %d: job %s finished/reported %d times", seed, j.ID, seen[j.ID])
			}
		}
		if r.Metrics.Preemptions == 0 {
			t.Fatalf("seed %d: chaos policy preempted nothing; test is not exercising preemption", seed)
		}
	}
}

func TestSameSeedSameBytes(t *testing.T) {
	prof := profiles(t)
	out := func() string {
		r, err := Run(Config{}, cluster(t, 4, 4), randomJobs(7, 100, prof), &testChaos{rng: rand.New(rand.NewPCG(7, 2))})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		r.WriteJSON(&b)
		r.WriteJobsCSV(&b)
		r.WriteSeriesCSV(&b)
		r.WriteBucketsCSV(&b)
		return b.String()
	}
	a, b := out(), out()
	if a != b || len(a) < 1000 {
		t.Fatalf("two runs with one seed differ (or are empty: %d bytes)", len(a))
	}
}

type eventDrivenFIFO struct{ testFIFO }

func (eventDrivenFIFO) EventDriven() bool { return true }

func TestEventDrivenPoliciesSkipQuanta(t *testing.T) {
	jobs := []Job{job("a", 0, 6000, 1), job("b", 10, 50, 1)}
	plain := run(t, cluster(t, 1, 1), jobs, &testFIFO{})
	ed := run(t, cluster(t, 1, 1), jobs, &eventDrivenFIFO{})
	if !near(plain.Metrics.AvgJCT, ed.Metrics.AvgJCT) {
		t.Fatalf("skipping quanta changed the outcome: %v vs %v", plain.Metrics.AvgJCT, ed.Metrics.AvgJCT)
	}
	// b waits ~6000 s: ~100 quanta for the plain policy, none for the
	// event-driven one (arrival of a, arrival of b, two completions).
	if plain.Metrics.Decisions < 90 || ed.Metrics.Decisions > 4 {
		t.Fatalf("decisions: plain %d, event-driven %d", plain.Metrics.Decisions, ed.Metrics.Decisions)
	}
}

// Start and stop latencies on 1 GPU, strict FIFO: a (t=0, 100 s), b (t=10,
// 50 s). StartLatency L: a holds the GPU from 0 but works 5..105 (JCT 105);
// b starts at 105, works 110..160 (JCT 150). StopLatency S = 3 keeps the
// GPU 3 s after a ends: b starts at 103 (JCT 143). Both: a 105, GPU free at
// 108, b works 113..163 (JCT 153).
func TestStartStopLatencyTwoJobsOneGPUFIFO(t *testing.T) {
	for _, tc := range []struct {
		start, stop float64
		a, b        float64
	}{
		{0, 0, 100, 140},
		{5, 0, 105, 150},
		{0, 3, 100, 143},
		{5, 3, 105, 153},
	} {
		jobs := []Job{job("a", 0, 100, 1), job("b", 10, 50, 1)}
		r, err := Run(Config{Check: true, StartLatency: tc.start, StopLatency: tc.stop}, cluster(t, 1, 1), jobs, &testFIFO{})
		if err != nil {
			t.Fatal(err)
		}
		got := jctOf(r)
		if !near(got["a"], tc.a) || !near(got["b"], tc.b) {
			t.Errorf("start %v stop %v: JCTs %v, want a=%v b=%v", tc.start, tc.stop, got, tc.a, tc.b)
		}
		if q := r.Jobs[1].Queueing; !near(q, tc.a+tc.stop-10) {
			t.Errorf("start %v stop %v: b queued %v, want %v", tc.start, tc.stop, q, tc.a+tc.stop-10)
		}
	}
}

// A zero-work job still pays the start latency, and a gang's GPUs are all
// held while a stopped job drains.
func TestStartLatencyZeroWorkAndGangDrain(t *testing.T) {
	jobs := []Job{job("z", 0, 0, 2), job("g", 1, 10, 2)}
	r, err := Run(Config{Check: true, StartLatency: 2, StopLatency: 4}, cluster(t, 1, 2), jobs, &testFIFO{})
	if err != nil {
		t.Fatal(err)
	}
	// z: 0..2 (JCT 2), GPUs free at 6; g: starts 6, works 8..18: JCT 17.
	if got := jctOf(r); !near(got["z"], 2) || !near(got["g"], 17) {
		t.Fatalf("JCTs %v, want z=2 g=17", got)
	}
}

// A job started on GPUs preempted in the same decision waits for them to
// drain: 1 GPU, b preempts a at t=10 (stop latency 3, start latency 2), so
// b works 15..25 (JCT 15); a resumes at 25 and works 27..117 (JCT 117).
func TestStartOnDrainingGPUWaits(t *testing.T) {
	jobs := []Job{job("a", 0, 100, 1), job("b", 10, 10, 1)}
	r, err := Run(Config{Check: true, StartLatency: 2, StopLatency: 3}, cluster(t, 1, 1), jobs, &preemptForNewcomer{})
	if err != nil {
		t.Fatal(err)
	}
	// a: works 2..10 (8 s done); b starts at 10 on a's draining GPU: ready
	// 13, works 15..25. a resumes at 28 (b's GPU drains 25..28), works
	// 30..122: JCT 122.
	if got := jctOf(r); !near(got["b"], 15) || !near(got["a"], 122) {
		t.Fatalf("JCTs %v, want b=15 a=122", got)
	}
}

// preemptForNewcomer runs the newest queued job on GPU 0 of the only node,
// preempting whatever runs there.
type preemptForNewcomer struct{}

func (preemptForNewcomer) Name() string { return "newcomer" }
func (preemptForNewcomer) Decide(s *policy.Snapshot) policy.Decision {
	var d policy.Decision
	var newest *policy.Job
	for _, j := range s.Jobs {
		if j.State == policy.Queued && (newest == nil || j.Submit > newest.Submit) {
			newest = j
		}
	}
	if newest == nil {
		return d
	}
	g := s.Cluster.Nodes[0].GPUs[0]
	for _, j := range s.Jobs {
		if j.State == policy.Running {
			if j.Submit > newest.Submit {
				return d
			}
			d.Preempts = append(d.Preempts, j.ID)
		}
	}
	if len(d.Preempts) == 0 && g.UsedFraction > 0 {
		return d
	}
	d.Starts = []policy.Start{{JobID: newest.ID, Placement: policy.Placement{Slots: []policy.Slot{{Node: s.Cluster.Nodes[0].Name, GPU: 0, Fraction: 1}}}}}
	return d
}
