//go:build unix

package scalebench

import (
	"math/rand/v2"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/internal/gcpace"
	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// churnInterval is the time between decisions in seconds: the live
// scheduler's quantum, 10 s; CARAVAN_SCALE_INTERVAL sets another (the
// live loop also decides 200 ms after an event, so under a steady
// stream of events its rounds are closer and each sees less churn).
func churnInterval() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("CARAVAN_SCALE_INTERVAL"), 64); err == nil && v > 0 {
		return v
	}
	return 10
}

// maxStarts is the timed decisions' start budget (Snapshot.MaxStarts):
// CARAVAN_SCALE_MAX_STARTS, 0 (none) unless set. The live scheduler
// decides with a budget of 128.
func maxStarts() int {
	n, _ := strconv.Atoi(os.Getenv("CARAVAN_SCALE_MAX_STARTS"))
	return max(n, 0)
}

// churnSpec is a round's churn at size z: every running job advances by
// the interval, a running job finishes with probability interval/5000 s
// (its mean remaining time: ~80 of 40,000 at 10k nodes and 10 s), and as
// many jobs arrive, so the queue stays as long. Running jobs' service
// accrues (policy.Accrual) unless CARAVAN_SCALE_ACCRUE=0, which adds it
// and re-stamps every running job every round, as before the accrual.
// A running job's progress is stamped apart (Snapshot.ProgressGen), as
// the live scheduler does, unless CARAVAN_SCALE_PROGRESS=joint, which
// stamps it in JobGen, as before that.
func (z size) churnSpec() pt.ChurnSpec {
	sp := z.spec()
	every := churnInterval()
	finish := every / 5000.0
	return pt.ChurnSpec{Interval: every, Finish: finish, Arrive: int(float64(sp.Running) * finish), Jobs: sp,
		Accrue: os.Getenv("CARAVAN_SCALE_ACCRUE") != "0", SplitProgress: os.Getenv("CARAVAN_SCALE_PROGRESS") != "joint"}
}

// BenchmarkScaleChurn decides a snapshot that changes between decisions
// as a live scheduler's does (policytest.Churn: the last decision
// applied, running jobs' Attained/Executed advanced, some finish, new
// jobs arrive, Now advances), with two instances of each ordering on the
// same snapshots: one given JobGen (tracked), one not (untracked, today's
// path). It reports trk- and unt- p50-ns, p90-ns, p99-ns, cpu-ns (mean)
// and cpu-p50-ns per decision
// and fails if their Starts or Preempts ever differ. The two alternate
// which decides first. CARAVAN_SCALE_CHURN=tracked (or untracked) runs
// one side only (the other's garbage then does not land in its GC);
// CARAVAN_SCALE_CHURN=eager runs two tracked sides, the second (eag-)
// with Framework.EagerTrials, to measure lazy preemption trials side by
// side on the same snapshots.
// CARAVAN_SCALE_CHURN_LOG=1 logs each timed decision's wall time, starts,
// preempts and trial stats (with -test.v): a p99 of 10 decisions is
// their maximum. CARAVAN_SCALE_SKIP_REASONS=1 times decisions without
// reasons (Snapshot.SkipReasons), as the live scheduler's between two
// queue views.
//
// CARAVAN_SCALE_QUEUE=fresh makes every queued job of the first snapshot
// one that never ran (no service, queued since submission), as in a
// queue that waits; by default each was preempted once (policytest's
// random jobs all carry service), the harder case for the orderings
// whose keys follow service.
//
// CARAVAN_SCALE_GIANTS=whole makes the queued gangs larger than the
// cluster (one job in 200, GPUs+1 workers) ask whole GPUs, so that none
// ever fits: by default a fifth of them ask a quarter to three quarters
// of a GPU per worker, fit, run, and are a trial's victim or leave tens
// of thousands of GPU shares to refill when preempted.
func BenchmarkScaleChurn(b *testing.B) {
	pair := pairing() // paired with another build's run: in turns (pair_test.go)
	for _, z := range pick(sizes, "CARAVAN_SCALE_SIZES", func(z size) string { return z.name }) {
		pair.turn()
		base := pt.Random(42, z.spec())
		if os.Getenv("CARAVAN_SCALE_QUEUE") == "fresh" {
			freshQueue(base)
		}
		if os.Getenv("CARAVAN_SCALE_GIANTS") == "whole" {
			wholeGiants(base)
		}
		pair.done()
		for _, name := range pick(orderings, "CARAVAN_SCALE_POLICIES", func(s string) string { return s }) {
			b.Run(z.name+"/"+name, func(b *testing.B) {
				pair.turn() // given back once warmed up (benchChurn)
				benchChurn(b, pt.Clone(base), z.churnSpec(), name)
			})
		}
	}
}

// wholeGiants makes every queued gang of s larger than its cluster's
// GPUs ask whole GPUs (no memory share), so that it never fits.
func wholeGiants(s *policy.Snapshot) {
	gpus := 0
	for _, n := range s.Cluster.Nodes {
		gpus += len(n.GPUs)
	}
	for _, j := range s.Jobs {
		if j.State == policy.Queued && j.Workers > gpus {
			j.Fraction, j.MemMiB = 1, 0
		}
	}
}

// freshQueue makes every queued job of s one that never ran.
func freshQueue(s *policy.Snapshot) {
	for _, j := range s.Jobs {
		if j.State == policy.Queued {
			j.Attained, j.Executed, j.QueuedSince = 0, 0, j.Submit
		}
	}
}

// churnWarmup is how many churned decisions precede the timed ones:
// CARAVAN_SCALE_CHURN_WARMUP, default 5.
func churnWarmup() int {
	if n, err := strconv.Atoi(os.Getenv("CARAVAN_SCALE_CHURN_WARMUP")); err == nil && n >= 0 {
		return n
	}
	return 5
}

// churnSettle is how many untimed decisions follow the warm-up in the
// timed setting where it is not the warm-up's (a start budget, no
// reasons): CARAVAN_SCALE_SETTLE, default 2 (0: time the first).
func churnSettle() int {
	if n, err := strconv.Atoi(os.Getenv("CARAVAN_SCALE_SETTLE")); err == nil && n >= 0 {
		return n
	}
	return 2
}

// churnHistory is how many finished jobs each policy has seen before
// the cold decision: CARAVAN_SCALE_HISTORY, default 0. A cluster that
// has run a while has a learning ordering's model warm (lucid refits
// whenever its data grows by a tenth: a young model refits every few
// finishes, each refit re-ranking every queued job).
func churnHistory() int {
	if n, err := strconv.Atoi(os.Getenv("CARAVAN_SCALE_HISTORY")); err == nil && n >= 0 {
		return n
	}
	return 0
}

// observeHistory has p observe n finished jobs like s's (clones of
// random ones, run for their oracle durations), if p learns.
func observeHistory(p policy.Policy, s *policy.Snapshot, n int) {
	o, ok := p.(policy.FinishObserver)
	if !ok || n == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(11, uint64(n)))
	for k := range n {
		j := *s.Jobs[rng.IntN(len(s.Jobs))]
		j.ID, j.State, j.Accrual = "history-"+strconv.Itoa(k), policy.Finished, policy.Accrual{}
		j.Executed = j.OracleDuration
		o.ObserveFinished(&j)
	}
}

// side is one instance's timings.
type side struct {
	name string
	p    policy.Policy
	lat  []time.Duration
	cpus []time.Duration // each decision's process CPU
	cpu  time.Duration
	heap uint64 // bytes allocated by its decisions
	// faults sums its decisions' minor page faults, lastFaults the last's
	faults, lastFaults int64
	last               policy.Decision
	// trials sums its Framework's TrialStats over the timed decisions
	trials policy.TrialStats
	// preps and prepCPU time learning between decisions (learnBetween)
	preps   []time.Duration
	prepCPU time.Duration
	// idles time its Idle between decisions (policy.Idler)
	idles []time.Duration
}

// decideSides has every side decide the churn's snapshot, the i-th
// decision starting with side i mod the sides (so neither always runs
// first), and fails where two sides chose differently.
func decideSides(b *testing.B, c *pt.Churn, sides []*side, i int) {
	gen := c.S.JobGen
	for k := range sides {
		sd := sides[(i+k)%len(sides)]
		sd.decide(c.S, sd.stamps(gen))
	}
	c.S.JobGen = gen
	if len(sides) == 2 {
		sameChoices(b, sides[0].last, sides[1].last)
	}
}

// stamps is the JobGen sd decides with: gen, or none for the untracked
// side.
func (sd *side) stamps(gen []uint64) []uint64 {
	if sd.name == "unt" {
		return nil
	}
	return gen
}

// between is what follows a decision where the live scheduler waits for
// its next round: each policy readies its memory (idle), the paced
// collection runs, and the churn applies the decision and moves on.
func between(c *pt.Churn, sides []*side, gc *gcpace.Pacer) {
	idle(sides)
	gc.Idle()
	step(c, sides)
}

// idleOff reports CARAVAN_SCALE_IDLE=off: the policies are not asked to
// ready memory between decisions (policy.Idler), for side-by-side runs.
func idleOff() bool { return os.Getenv("CARAVAN_SCALE_IDLE") == "off" }

// idle lets every side ready its memory for the next decision, where the
// live scheduler waits for its next round (before the paced collection,
// as there), and times it.
func idle(sides []*side) {
	if idleOff() {
		return
	}
	for _, sd := range sides {
		t0 := time.Now()
		policy.IdleBetween(sd.p)
		sd.idles = append(sd.idles, time.Since(t0))
	}
}

// learnBetween reports CARAVAN_SCALE_LEARN=between: each policy is fed
// the jobs a round finished as they finish (ObserveFinished) and
// prepares (policy.Preparer) before the next decision, as the simulator
// does, instead of learning them from the snapshot inside the decision.
// The decisions are the same; the work a learnt model moves (lucid's
// refit re-ranks every queued job) is timed apart (prep-*).
func learnBetween() bool { return os.Getenv("CARAVAN_SCALE_LEARN") == "between" }

// learn feeds sd's policy the finished jobs fin and lets it prepare.
func (sd *side) learn(fin []*policy.Job) {
	c0, t0 := cpuTime(), time.Now()
	policy.LearnBetween(sd.p, fin)
	sd.preps = append(sd.preps, time.Since(t0))
	sd.prepCPU += cpuTime() - c0
}

// step advances the churn by the first side's last decision and, when
// learning between decisions, feeds every side what the round finished.
func step(c *pt.Churn, sides []*side) {
	c.Step(copyDecision(sides[0].last))
	if learnBetween() {
		fin := c.Finished()
		for _, sd := range sides {
			sd.learn(fin)
		}
	}
}

func (sd *side) decide(s *policy.Snapshot, gen []uint64) {
	s.JobGen = gen
	a0 := heapAllocs()
	c0, f0 := usage()
	t0 := time.Now()
	sd.last = sd.p.Decide(s)
	if f, ok := sd.p.(*policy.Framework); ok {
		sd.trials = addTrials(sd.trials, f.LastTrialStats())
	}
	sd.lat = append(sd.lat, time.Since(t0))
	c1, f1 := usage()
	c := c1 - c0
	sd.lastFaults = f1 - f0
	sd.faults += sd.lastFaults
	sd.cpus = append(sd.cpus, c)
	sd.cpu += c
	sd.heap += heapAllocs() - a0
}

// heapAllocs is the bytes this process has allocated on the heap so far
// (runtime/metrics: no stop-the-world, unlike ReadMemStats).
func heapAllocs() uint64 {
	m := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

func benchChurn(b *testing.B, s *policy.Snapshot, spec pt.ChurnSpec, name string) {
	mode := os.Getenv("CARAVAN_SCALE_CHURN")
	names := []string{"trk", "unt"}
	if mode == "eager" {
		names = []string{"trk", "eag"}
	}
	var sides []*side
	for _, n := range names {
		if mode == "" || mode == "eager" || strings.HasPrefix(mode, map[string]string{"trk": "tracked", "unt": "untracked"}[n]) {
			p, err := registry.New(name, registry.Config{GittinsPrior: []float64{100, 900, 3000, 20000, 80000}})
			if err != nil {
				b.Fatal(err)
			}
			if f, ok := p.(*policy.Framework); ok && n == "eag" {
				f.EagerTrials = true // lazy trials' baseline, side by side
			}
			observeHistory(p, s, churnHistory())
			sides = append(sides, &side{name: n, p: p})
		}
	}
	c := pt.NewChurn(7, s, spec)
	gen := s.JobGen
	for _, sd := range sides { // the cold decision, then one of churn
		sd.decide(s, gen[:len(s.Jobs)])
	}
	gc := pacer()
	between(c, sides, gc)
	// warm up: a random snapshot is no policy's steady state (LAS first
	// preempts thousands), so churn a few rounds before timing
	for w := 0; w < churnWarmup(); w++ {
		for _, sd := range sides {
			g := c.S.JobGen
			sd.decide(s, sd.stamps(g))
			s.JobGen = g
		}
		between(c, sides, gc)
	}
	// the budget applies from here: warmed up without one, a budgeted
	// run starts from the same state instead of spending its decisions
	// filling the random snapshot's free GPUs 128 at a time
	s.MaxStarts = maxStarts()
	s.SkipReasons = os.Getenv("CARAVAN_SCALE_SKIP_REASONS") != "" // a live round between queue views
	// a setting other than the warm-up's first allocates the buffers of
	// its own paths (2D-Gittins' loose ranking, ~700 fresh pages), once
	// in a scheduler's life: its first decisions settle it, untimed
	if s.MaxStarts > 0 || s.SkipReasons {
		for i := range churnSettle() {
			decideSides(b, c, sides, i)
			between(c, sides, gc)
		}
	}
	for _, sd := range sides {
		sd.lat, sd.cpus, sd.cpu, sd.heap, sd.trials = sd.lat[:0], sd.cpus[:0], 0, 0, policy.TrialStats{}
		sd.faults = 0
		sd.preps, sd.prepCPU, sd.idles = sd.preps[:0], 0, sd.idles[:0]
	}
	gc.Reset()
	pair := pairing()
	pair.done() // warmed up

	logEach := os.Getenv("CARAVAN_SCALE_CHURN_LOG") != "" // each decision's wall time and size
	stop := steadyProfile(b, "churn-"+name)
	defer stop()
	starts, preempts := 0, 0
	pr := newProbe() // the host's own tail, between decisions
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pair.turn() // a decision and what follows it, alone
		decideSides(b, c, sides, i)
		starts, preempts = starts+len(sides[0].last.Starts), preempts+len(sides[0].last.Preempts)
		if logEach {
			sd := sides[0]
			b.Logf("decision %d: %v, %d starts, %d preempts, %d page faults, trials %+v", i, sd.lat[len(sd.lat)-1],
				len(sd.last.Starts), len(sd.last.Preempts), sd.lastFaults, lastTrials(sd.p))
		}
		pr.time()
		if logEach && pr != nil {
			b.Logf("probe %d: %v", i, pr.lat[len(pr.lat)-1])
		}
		between(c, sides, gc)
		pair.done()
	}
	b.StopTimer()
	stop()
	for _, sd := range sides {
		b.ReportMetric(float64(sd.cpu.Nanoseconds())/float64(b.N), sd.name+"-cpu-ns")
		b.ReportMetric(float64(quantile(sd.lat, 50).Nanoseconds()), sd.name+"-p50-ns")
		b.ReportMetric(float64(quantile(sd.lat, 90).Nanoseconds()), sd.name+"-p90-ns")
		b.ReportMetric(float64(quantile(sd.lat, 99).Nanoseconds()), sd.name+"-p99-ns")
		// the median decision's CPU: on a shared host single decisions
		// cost up to 8x their median, CPU time included (the policy
		// README's fifteenth round), which the mean and p99 carry
		b.ReportMetric(float64(quantile(sd.cpus, 50).Nanoseconds()), sd.name+"-cpu-p50-ns")
		b.ReportMetric(float64(sd.heap)/float64(b.N), sd.name+"-alloc-B")
		b.ReportMetric(float64(sd.faults)/float64(b.N), sd.name+"-faults")
		if len(sd.idles) > 0 {
			b.ReportMetric(float64(quantile(sd.idles, 99).Nanoseconds()), sd.name+"-idle-p99-ns")
		}
		if len(sd.preps) > 0 {
			b.ReportMetric(float64(sd.prepCPU.Nanoseconds())/float64(b.N), sd.name+"-prep-cpu-ns")
			b.ReportMetric(float64(quantile(sd.preps, 50).Nanoseconds()), sd.name+"-prep-p50-ns")
			b.ReportMetric(float64(quantile(sd.preps, 99).Nanoseconds()), sd.name+"-prep-p99-ns")
		}
	}
	if pr != nil {
		b.ReportMetric(float64(quantile(pr.lat, 50).Nanoseconds()), "host-p50-ns")
		b.ReportMetric(float64(quantile(pr.lat, 99).Nanoseconds()), "host-p99-ns")
	}
	b.ReportMetric(float64(gc.Spent().Nanoseconds())/float64(b.N), "paced-gc-ns")
	b.ReportMetric(float64(c.Changed), "stamps")
	b.ReportMetric(float64(starts)/float64(b.N), "starts")
	b.ReportMetric(float64(preempts)/float64(b.N), "preempts")
	reportTrials(b, sides[0].trials)
}

// addTrials sums two decisions' trial counts.
func addTrials(a, b policy.TrialStats) policy.TrialStats {
	return policy.TrialStats{Trials: a.Trials + b.Trials, Replayed: a.Replayed + b.Replayed,
		Victims: a.Victims + b.Victims, VictimSlots: a.VictimSlots + b.VictimSlots,
		Materialised: a.Materialised + b.Materialised, GivenBack: a.GivenBack + b.GivenBack,
		PlacerCalls: a.PlacerCalls + b.PlacerCalls, Counted: a.Counted + b.Counted, Narrowed: a.Narrowed + b.Narrowed,
		Fitted:      a.Fitted + b.Fitted,
		LooseSorted: a.LooseSorted + b.LooseSorted}
}

// reportTrials reports the first side's preemption trials per timed
// decision (none for a policy that is not a Framework, or preempts
// nothing): how many, and how many victims they released, in the
// Capacity (materialised) or virtually, and gave back.
func reportTrials(b *testing.B, t policy.TrialStats) {
	if t.Trials+t.Replayed == 0 {
		return
	}
	n := float64(b.N)
	b.ReportMetric(float64(t.Trials)/n, "trials")
	b.ReportMetric(float64(t.Replayed)/n, "replayed")
	b.ReportMetric(float64(t.Victims)/n, "victims")
	b.ReportMetric(float64(t.VictimSlots)/n, "victim-slots")
	b.ReportMetric(float64(t.Materialised)/n, "materialised")
	b.ReportMetric(float64(t.GivenBack)/n, "given-back")
	if t.LooseSorted > 0 {
		b.ReportMetric(float64(t.LooseSorted)/n, "loose-sorted")
	}
	b.ReportMetric(float64(t.Fitted)/n, "fitted")
	b.ReportMetric(float64(t.PlacerCalls)/n, "trial-places")
	b.ReportMetric(float64(t.Counted)/n, "trial-counts")
}

// copyDecision copies what Churn applies: a tracked decision's slices
// are the policy's until its next Decide.
func copyDecision(d policy.Decision) policy.Decision {
	return policy.Decision{Preempts: slices.Clone(d.Preempts), Starts: slices.Clone(d.Starts)}
}

func sameChoices(b *testing.B, x, y policy.Decision) {
	if !slices.Equal(x.Preempts, y.Preempts) || len(x.Starts) != len(y.Starts) {
		b.Fatalf("tracked and untracked decisions differ: %d/%d starts, %v / %v preempts", len(x.Starts), len(y.Starts), x.Preempts, y.Preempts)
	}
	for i := range x.Starts {
		if x.Starts[i].JobID != y.Starts[i].JobID || !slices.Equal(x.Starts[i].Placement.Slots, y.Starts[i].Placement.Slots) {
			b.Fatalf("tracked and untracked decisions differ at start %d: %v / %v", i, x.Starts[i], y.Starts[i])
		}
	}
	if len(x.Waiting) != len(y.Waiting) || len(x.Ranking) != len(y.Ranking) {
		b.Fatalf("tracked and untracked Waiting/Ranking differ in length: %d/%d, %d/%d", len(x.Waiting), len(y.Waiting), len(x.Ranking), len(y.Ranking))
	}
}

// lastTrials is p's last decision's TrialStats (none if it is not a
// Framework): a decision's victims and the slots they held.
func lastTrials(p policy.Policy) policy.TrialStats {
	if f, ok := p.(*policy.Framework); ok {
		return f.LastTrialStats()
	}
	return policy.TrialStats{}
}
