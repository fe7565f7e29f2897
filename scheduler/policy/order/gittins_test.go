package order

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// Two-point service distribution {100, 1000} GPU·s with Δ = 500:
//
//	a=0:   P(S ≤ 500 | S > 0)   = 1/2, E[min(S, 500)]        = (100+500)/2 = 300 → G = 1/600
//	a=50:  P(S ≤ 550 | S > 50)  = 1/2, E[min(S−50, 500)]     = (50+500)/2  = 275 → G = 1/550
//	a=150: P(S ≤ 650 | S > 150) = 0                                                → G = 0
func TestGittinsTwoPointByHand(t *testing.T) {
	g, err := NewGittins(GittinsConfig{Prior: []float64{1000, 100}, Delta: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ a, want float64 }{{0, 1.0 / 600}, {50, 1.0 / 550}, {150, 0}, {5000, 0}} {
		if got := g.Index(c.a); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("G(%g) = %g, want %g", c.a, got, c.want)
		}
	}
	fresh, half, past := pt.Job("fresh", 1, 0), pt.Job("half", 1, 5), pt.Job("past", 1, 1)
	half.Attained, past.Attained = 50, 150
	s := &policy.Snapshot{Now: 10, Cluster: oneNode(1), Jobs: []*policy.Job{fresh, half, past}}
	// unlike LAS, the job with some service but a better chance to finish soon goes first
	if got := ids(g.Order(s)); !equal(got, []string{"half", "fresh", "past"}) {
		t.Fatalf("order %v", got)
	}
	if d := decide(t, g, s); !equal(started(d), []string{"half"}) {
		t.Fatalf("starts %v", started(d))
	}
}

func TestGittinsLearnsOnline(t *testing.T) {
	g, _ := NewGittins(GittinsConfig{Prior: []float64{100, 1000}, Delta: 500})
	f := pt.Job("done", 2, 0)
	f.State, f.Attained = policy.Finished, 200
	s := &policy.Snapshot{Now: 10, Cluster: oneNode(1), Jobs: []*policy.Job{f}}
	fw := policy.NewFramework(g, place.NewConsolidated())
	fw.Decide(s)          // a Finished job in the snapshot is learned
	fw.ObserveFinished(f) // and deduplicated by ID
	if g.Samples() != 3 {
		t.Fatalf("samples %d, want 3", g.Samples())
	}
	// {100, 200, 1000}, a=0: P = 2/3, E = (100+200+500)/3 → G = 2/800
	if got := g.Index(0); math.Abs(got-2.0/800) > 1e-12 {
		t.Errorf("G(0) = %g, want %g", got, 2.0/800)
	}
}

// Two jobs in Q0 under the {100, 1000} / Δ = 500 distribution of
// TestGittinsTwoPointByHand. "run" holds the only GPU and its attained
// service grows quantum by quantum: a = 0, 50, 150 give G = 1/600, 1/550,
// 0. "wait" is queued at a = 0, G = 1/600. At a = 150 the running job's
// index (0) is below the queued job's (1/600), but both are still in Q0
// (< 3250 GPU·s), and 2D-Gittins, like 2D-LAS, only preempts for a job of
// a higher queue: the Gittins index orders jobs inside a queue, it does
// not let a same-queue job displace a running one.
func TestGittinsNoPreemptionWithinQueue(t *testing.T) {
	g, err := NewGittins(GittinsConfig{Prior: []float64{1000, 100}, Delta: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []float64{0, 50, 150} {
		cl := oneNode(1)
		run := pt.Job("run", 1, 0)
		run.Attained, run.Executed = a, a
		pt.Run(&cl, run, pt.Whole("r0n0", 16384, 0))
		wait := pt.Job("wait", 1, 5)
		s := &policy.Snapshot{Now: 10 + a, Cluster: cl, Jobs: []*policy.Job{run, wait}}
		r := g.Order(s)
		if !equal(ids(r), []string{"run", "wait"}) || r[0].Queue != 0 || r[1].Queue != 0 {
			t.Fatalf("a=%g: order %v queues %d,%d; want run before wait, both in Q0", a, ids(r), r[0].Queue, r[1].Queue)
		}
		d := decide(t, g, s)
		if len(d.Preempts) != 0 || len(d.Starts) != 0 {
			t.Fatalf("a=%g (G=%g vs %g): same-queue job must wait, preempts %v starts %v",
				a, g.Index(a), g.Index(0), d.Preempts, started(d))
		}
		if got := d.Waiting.Reason("wait"); !strings.HasPrefix(got, "queue 0: needs 1 GPU, 0 free") {
			t.Errorf("a=%g: waiting reason %q", a, got)
		}
	}
}

// A job of a higher queue still preempts: "old" has 4000 GPU·s (Q1), a
// fresh arrival is in Q0 and takes its GPU.
func TestGittinsPreemptsForHigherQueue(t *testing.T) {
	g, _ := NewGittins(GittinsConfig{Prior: []float64{1000, 100}, Delta: 500})
	cl := oneNode(1)
	old := pt.Job("old", 1, 0)
	old.Attained, old.Executed = 4000, 4000
	pt.Run(&cl, old, pt.Whole("r0n0", 16384, 0))
	young := pt.Job("young", 1, 3990)
	s := &policy.Snapshot{Now: 4000, Cluster: cl, Jobs: []*policy.Job{old, young}}
	d := decide(t, g, s)
	if !equal(d.Preempts, []string{"old"}) || !equal(started(d), []string{"young"}) {
		t.Fatalf("preempts %v starts %v, want old (Q1) preempted for young (Q0)", d.Preempts, started(d))
	}
}

// Inside a queue the Gittins index still decides which queued job starts
// next and, among running jobs, which is released first when a
// higher-queue job needs GPUs (lowest index last).
func TestGittinsRanksInsideQueue(t *testing.T) {
	g, _ := NewGittins(GittinsConfig{Prior: []float64{1000, 100}, Delta: 500})
	cl := oneNode(4)
	r150, r50 := pt.Job("r150", 1, 0), pt.Job("r50", 1, 1)
	r150.Attained, r50.Attained = 150, 50 // G = 0 and 1/550
	pt.Run(&cl, r150, pt.Whole("r0n0", 16384, 0))
	pt.Run(&cl, r50, pt.Whole("r0n0", 16384, 1))
	q0, q50 := pt.Job("q0", 1, 2), pt.Job("q50", 1, 3)
	q50.Attained = 50 // G = 1/550 beats q0's 1/600 although q0 came first
	s := &policy.Snapshot{Now: 10, Cluster: cl, Jobs: []*policy.Job{r150, r50, q0, q50}}
	if got := ids(g.Order(s)); !equal(got, []string{"r50", "r150", "q50", "q0"}) {
		t.Fatalf("order %v", got)
	}
}

// TestServiceDistIncremental: a distribution grown by Add, queried between
// additions (so its prefix sums are patched, not rebuilt), gives exactly
// the indexes of one built from the same samples at once.
func TestServiceDistIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var samples []float64
	d := NewServiceDist(nil)
	for step := 0; step < 400; step++ {
		v := math.Round(rng.ExpFloat64()*5000) + 1
		samples = append(samples, v)
		d.Add(v)
		if step%3 == 0 {
			continue // several adds between queries
		}
		fresh := NewServiceDist(samples)
		for _, a := range []float64{0, 1, v, 2000, 5000, 1e5, rng.Float64() * 20000} {
			for _, delta := range []float64{1, 3250, 1e6} {
				if got, want := d.Gittins(a, delta), fresh.Gittins(a, delta); got != want {
					t.Fatalf("step %d: Gittins(%g, %g) = %v, fresh %v", step, a, delta, got, want)
				}
			}
		}
	}
}

// Prepare (policy.OrderPreparer) re-indexes, after samples are learnt,
// what the last tracked call ranked: the next call ranks exactly as a
// 2D-Gittins that never prepared, whether Now moved (running jobs'
// service moved with it) or not (their indexes are computed at the
// service the last call saw, from the voided record).
func TestGittinsPrepareSameRanking(t *testing.T) {
	prior := spreadPrior()
	for seed := uint64(1); seed <= 4; seed++ {
		s := pt.Random(seed, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 4, GPUsPerNode: 4},
			Running: 40, Queued: 120, Busy: 0.9})
		s.JobGen = make([]uint64, len(s.Jobs))
		for i := range s.JobGen {
			s.JobGen[i] = uint64(i + 1)
		}
		prepared, _ := NewGittins(GittinsConfig{Prior: prior})
		plain, _ := NewGittins(GittinsConfig{Prior: prior})
		rng := rand.New(rand.NewPCG(seed, 7))
		reprepared := 0
		for round := range 6 {
			gen := s.JobGen
			s.JobGen = nil
			want := ids(plain.Order(s))
			s.JobGen = gen
			if got := ids(prepared.Order(s)); !equal(got, want) {
				t.Fatalf("seed %d round %d: prepared ranked\n%v\nwithout\n%v", seed, round, got, want)
			}
			for range 3 { // samples across the jobs' services
				v := math.Exp(rng.Float64() * 12)
				plain.dist.Add(v)
				prepared.dist.Add(v)
			}
			if prepared.Prepare() {
				reprepared++
			}
			if round%2 == 1 {
				s.Now += 30 // running jobs' service moves, as their index
			}
		}
		if reprepared == 0 {
			t.Fatalf("seed %d: Prepare never re-ranked", seed)
		}
	}
}
