package order

import (
	"math"
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func newLucid(t *testing.T, cfg LucidConfig) *Lucid {
	t.Helper()
	l, err := NewLucid(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// finish teaches l that a job of user u with w GPUs ran d seconds.
func finish(l *Lucid, id, u string, w int, d float64) {
	j := pt.Job(id, w, 0)
	j.User, j.State, j.Executed = u, policy.Finished, d
	l.ObserveFinished(j)
}

func TestLucidDefaultsAndValidation(t *testing.T) {
	l := newLucid(t, LucidConfig{})
	if l.cfg.ProfileTime != 80 || l.cfg.ProfileGPUs != 4 || l.cfg.ProfileGrace != 60 {
		t.Errorf("defaults %+v", l.cfg)
	}
	if l.Name() != "lucid" || !l.Preemptive() {
		t.Errorf("name %q preemptive %v", l.Name(), l.Preemptive())
	}
	if _, err := NewLucid(LucidConfig{ProfileGPUs: -1}); err == nil {
		t.Errorf("negative profile GPUs must be rejected")
	}
	if _, err := NewLucid(LucidConfig{Estimate: LucidEstimateConfig{Shrink: math.NaN()}}); err == nil {
		t.Errorf("NaN shrink must be rejected")
	}
}

// New small jobs are profiled first, fewest GPUs first; a job too big to
// profile and a profiled job sent back queue by estimated size.
func TestLucidProfilingFirst(t *testing.T) {
	l := newLucid(t, LucidConfig{})
	finish(l, "f1", "u", 1, 100) // 1-GPU jobs of u are short
	small := pt.Job("small", 1, 10)
	small.User = "u"
	small.Executed, small.Preemptions = 90, 1 // profiled, sent back
	big := pt.Job("big", 8, 0)                // > 4 GPUs: never profiled
	new2 := pt.Job("new2", 2, 30)
	new1 := pt.Job("new1", 1, 40)
	s := &policy.Snapshot{Now: 100, Cluster: oneNode(8), Jobs: []*policy.Job{small, big, new2, new1}}
	got := ids(l.Order(s))
	if want := []string{"new1", "new2", "small", "big"}; !equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if l.phase(new1, 0) != profiling || l.phase(small, 0) != mainPhase || l.phase(big, 0) != mainPhase {
		t.Errorf("phases %v %v %v", l.phase(new1, 0), l.phase(small, 0), l.phase(big, 0))
	}
	off := newLucid(t, LucidConfig{ProfileTime: -1})
	if off.phase(new1, 0) != mainPhase {
		t.Errorf("ProfileTime < 0 must disable profiling")
	}
}

// Shortest estimated size (remaining × GPUs) first; learned per user.
func TestLucidShortestPredictedFirst(t *testing.T) {
	l := newLucid(t, LucidConfig{ProfileTime: -1, Estimate: LucidEstimateConfig{Recent: -1}})
	for i := range 20 {
		finish(l, "a"+string(rune('a'+i)), "alice", 1, 100)
		finish(l, "b"+string(rune('a'+i)), "bob", 1, 10000)
	}
	pa, pb := l.est.Predict(&policy.Job{User: "alice", Workers: 1}), l.est.Predict(&policy.Job{User: "bob", Workers: 1})
	if !(pa < 300 && pb > 3000) {
		t.Fatalf("alice %.0f s, bob %.0f s: want ≈100 and ≈10000", pa, pb)
	}
	b := pt.Job("b", 1, 0)
	b.User = "bob"
	a4 := pt.Job("a4", 4, 5) // alice, 4 GPUs: 4 × ~100
	a4.User = "alice"
	a1 := pt.Job("a1", 1, 10)
	a1.User = "alice"
	s := &policy.Snapshot{Now: 20, Cluster: oneNode(4), Jobs: []*policy.Job{b, a4, a1}}
	if got, want := ids(l.Order(s)), []string{"a1", "a4", "b"}; !equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	// a1 starts; a4 does not fit the 3 GPUs left, and b backfills
	d := decide(t, l, s)
	if got := started(d); !equal(got, []string{"a1", "b"}) {
		t.Fatalf("started %v, want [a1 b]", got)
	}
}

// A running main-phase job is never preempted, even by a much shorter
// job; a job in its profiling run is not either.
func TestLucidNeverPreemptsMainPhase(t *testing.T) {
	l := newLucid(t, LucidConfig{Estimate: LucidEstimateConfig{Recent: -1}})
	for i := range 10 {
		finish(l, "s"+string(rune('a'+i)), "short", 1, 50)
		finish(l, "l"+string(rune('a'+i)), "long", 1, 1e6)
	}
	cl := oneNode(2)
	long := pt.Job("long", 1, 0)
	long.User, long.Executed, long.LastStart = "long", 5000, 0
	pt.Run(&cl, long, pt.Whole("r0n0", 16384, 0))
	prof := pt.Job("prof", 1, 990) // inside its profiling run
	prof.User, prof.Executed, prof.LastStart = "long", 10, 990
	pt.Run(&cl, prof, pt.Whole("r0n0", 16384, 1))
	short := pt.Job("short", 1, 995)
	short.User, short.Executed, short.Preemptions = "short", 80, 1
	fresh := pt.Job("fresh", 1, 999)
	s := &policy.Snapshot{Now: 1000, Cluster: cl, Jobs: []*policy.Job{long, prof, short, fresh}}
	if l.CanPreempt(long, 1000) || l.CanPreempt(prof, 1000) {
		t.Fatalf("main-phase and profiling jobs must not be preemptable")
	}
	d := decide(t, l, s)
	if len(d.Preempts) != 0 || len(d.Starts) != 0 {
		t.Fatalf("preempts %v starts %v, want nothing", d.Preempts, started(d))
	}
}

// A job whose profiling run just ended goes back to the queue when a
// higher-ranked job needs its GPUs, but only within ProfileGrace.
func TestLucidProfiledJobSentBack(t *testing.T) {
	l := newLucid(t, LucidConfig{})
	mk := func(executed float64) *policy.Snapshot {
		cl := oneNode(1)
		p := pt.Job("p", 1, 0)
		p.Executed, p.LastStart = executed, 0
		pt.Run(&cl, p, pt.Whole("r0n0", 16384, 0))
		return &policy.Snapshot{Now: executed, Cluster: cl, Jobs: []*policy.Job{p, pt.Job("new", 1, executed-1)}}
	}
	for _, c := range []struct {
		executed float64
		preempt  bool
	}{{79, false}, {80, true}, {139, true}, {140, false}, {5000, false}} {
		d := decide(t, l, mk(c.executed))
		if got := len(d.Preempts) == 1 && equal(started(d), []string{"new"}); got != c.preempt {
			t.Errorf("executed %g: preempts %v starts %v, want preempt=%v", c.executed, d.Preempts, started(d), c.preempt)
		}
	}
	// already sent back once (Preemptions > 0): main phase for good
	s := mk(100)
	s.Jobs[0].Preemptions = 1
	if d := decide(t, l, s); len(d.Preempts) != 0 {
		t.Errorf("a job sent back once must not be preempted again: %v", d.Preempts)
	}
}

// The estimator learns from finished jobs only, shrinks rare levels and
// backs off to coarser terms for unseen ones; it never reads
// OracleDuration.
func TestLucidEstimatorLearnsAndBacksOff(t *testing.T) {
	e, err := NewLucidEstimator(LucidEstimateConfig{Recent: -1})
	if err != nil {
		t.Fatal(err)
	}
	j := &policy.Job{User: "u", Workers: 1, OracleDuration: 42}
	if got := e.Predict(j); math.Abs(got-3600) > 1e-6 {
		t.Fatalf("untrained prediction %g, want the 3600 s prior", got)
	}
	// u's 1-GPU jobs run 100 s, its 8-GPU jobs 10,000 s; v's 1-GPU 1,000 s
	for range 30 {
		e.Observe(&policy.Job{User: "u", Workers: 1}, 100)
		e.Observe(&policy.Job{User: "u", Workers: 8}, 10000)
		e.Observe(&policy.Job{User: "v", Workers: 1}, 1000)
	}
	within := func(got, want, factor float64) bool { return got > want/factor && got < want*factor }
	if got := e.Predict(j); !within(got, 100, 1.5) {
		t.Errorf("u, 1 GPU: %g, want ≈100", got)
	}
	if got := e.Predict(&policy.Job{User: "u", Workers: 8}); !within(got, 10000, 1.5) {
		t.Errorf("u, 8 GPUs: %g, want ≈10000", got)
	}
	// unseen user: user and user×gpus terms are 0, the 8-GPU effect remains
	w8 := &policy.Job{User: "new", Workers: 8}
	terms := e.Terms(w8)
	if terms[1+termUser].Score != 0 || terms[1+termUserShape].Score != 0 || terms[1+termShape].Score <= 0 {
		t.Errorf("unseen user terms %+v: want user = user×gpus = 0 and a positive gpus effect", terms)
	}
	if got, one := e.Predict(w8), e.Predict(&policy.Job{User: "new", Workers: 1}); !(got > 3*one) {
		t.Errorf("unseen user: 8 GPUs %g vs 1 GPU %g, want the GPU effect kept", got, one)
	}
	// unseen user, shape and model: the intercept alone
	if got := e.PredictLog(&policy.Job{User: "new", Workers: 3, Model: "m"}); got != e.mu {
		t.Errorf("all-unseen prediction %g, want intercept %g", got, e.mu)
	}
	// the sum of terms is the prediction
	sum := 0.0
	for _, tm := range e.Terms(j) {
		sum += tm.Score
	}
	if math.Abs(sum-e.PredictLog(j)) > 1e-9 {
		t.Errorf("terms sum to %g, prediction %g", sum, e.PredictLog(j))
	}
}

// Shrinkage: one sample moves a level by n/(n+λ) of its residual.
func TestLucidEstimatorShrinks(t *testing.T) {
	e, _ := NewLucidEstimator(LucidEstimateConfig{Recent: -1, Shrink: 5, Passes: 1})
	for range 99 {
		e.Observe(&policy.Job{User: "a", Workers: 1}, 1000)
	}
	e.Observe(&policy.Job{User: "b", Workers: 1}, 1000*math.E) // residual +1
	e.refit()
	// b's user term: median residual 1 × 1/(1+5); its user×gpus term is
	// fitted after it on what is left: (1 − 1/6) × 1/6.
	u := e.Terms(&policy.Job{User: "b", Workers: 1})
	if math.Abs(u[1+termUser].Score-1.0/6) > 1e-9 || math.Abs(u[1+termUserShape].Score-5.0/36) > 1e-9 {
		t.Errorf("terms %+v: want user 1/6, user×gpus 5/36", u)
	}
}

// The recent term follows a user's last jobs and is frozen per job at
// its first ranking.
func TestLucidRecentTermFrozenAtArrival(t *testing.T) {
	l := newLucid(t, LucidConfig{ProfileTime: -1, Estimate: LucidEstimateConfig{Recent: 3, Window: 1000}})
	for range 50 {
		finish(l, "x", "u", 1, 1000)
	}
	early := pt.Job("early", 1, 0)
	early.User = "u"
	s := &policy.Snapshot{Now: 1, Jobs: []*policy.Job{early}}
	l.Order(s)
	before := l.predictLog(early)
	for i := range 3 { // a burst of long jobs, fewer than a refit needs
		finish(l, "y"+string(rune('a'+i)), "u", 1, 100000)
	}
	late := pt.Job("late", 1, 2)
	late.User = "u"
	s.Jobs = append(s.Jobs, late)
	r := l.Order(s)
	if l.est.Context(late) <= 0 || l.predictLog(late) <= before+1 {
		t.Fatalf("recent term %g: late %g vs early %g, want the burst to raise it", l.est.Context(late), l.predictLog(late), before)
	}
	if l.predictLog(early) != before {
		t.Errorf("early estimate moved from %g to %g without a refit", before, l.predictLog(early))
	}
	if !equal(ids(r), []string{"early", "late"}) {
		t.Errorf("order %v", ids(r))
	}
}

func TestLucidPredictionErrorScored(t *testing.T) {
	l := newLucid(t, LucidConfig{ProfileTime: -1, Estimate: LucidEstimateConfig{Prior: 100, Recent: -1}})
	j := pt.Job("j", 1, 0)
	l.Order(&policy.Snapshot{Jobs: []*policy.Job{j}}) // estimated 100 s
	j.State, j.Executed = policy.Finished, 400
	l.ObserveFinished(j)
	e := l.PredictionError()
	if e.N != 1 || math.Abs(e.MAELog-math.Log(4)) > 1e-9 || math.Abs(e.MedianRelErr-0.75) > 1e-9 || e.Within2x != 0 {
		t.Errorf("error %+v, want n=1, MAE ln 4, rel 0.75", e)
	}
	if e.String() == "" || len(l.pred) != 0 {
		t.Errorf("finished job's estimate must be dropped")
	}
}

func TestLucidRemaining(t *testing.T) {
	mu, sigma := math.Log(1000), 1.0
	if got := remainingFrom(mu, sigma, 0); math.Abs(got-1000) > 1e-9 {
		t.Errorf("fresh job: %g, want 1000", got)
	}
	prev := 0.0
	for _, e := range []float64{10, 100, 1000, 1e4, 1e5, 1e7} {
		r := remainingFrom(mu, sigma, e)
		if !(r > 0) || math.IsInf(r, 0) {
			t.Fatalf("executed %g: remaining %g", e, r)
		}
		if total := e + r; total < prev {
			t.Errorf("executed %g: conditional median %g below the previous %g", e, total, prev)
		}
		prev = e + r
	}
	// at the median itself the conditional median is the 75th percentile
	if got := remainingFrom(mu, sigma, 1000) + 1000; math.Abs(math.Log(got)-(mu+0.6745*sigma)) > 1e-3 {
		t.Errorf("conditional median at the median: %g", got)
	}
}

// Same inputs, same decisions: two fresh instances agree, and one instance
// fed the same history agrees with itself.
func TestLucidDeterministic(t *testing.T) {
	sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 4, GPUsPerNode: 4}, Running: 30, Queued: 50, Busy: 0.8}
	for seed := uint64(1); seed <= 10; seed++ {
		var ds [2]policy.Decision
		for k := range ds {
			l := newLucid(t, LucidConfig{})
			for i := range 40 {
				finish(l, "h"+string(rune('a'+i)), []string{"u1", "u2", "u3"}[i%3], 1+i%4, float64(100*(1+i)))
			}
			ds[k] = decide(t, l, pt.Random(seed, sp))
		}
		if !reflect.DeepEqual(ds[0], ds[1]) {
			t.Fatalf("seed %d: decisions differ", seed)
		}
	}
}
