package live

import (
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// The policy sees what the scheduler reads from Nomad: under LAS with a
// small limit, a running gang with much service is preempted for a new
// queued job, and the start waits until the preempted GPUs are released.
func TestLASDecisionFromObservedJobs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Token, cfg.Policy, cfg.QueueLimits = "t", "tiresias-las", []float64{4}
	s, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	nodes := testNodes()
	whole := gang{Workers: []worker{{Group: "w0", Task: "t"}, {Group: "w1", Task: "t"}, {Group: "w2", Task: "t"}}, Fraction: 1}
	longHeld := []target{{NodeID: "n1", GPU: 0, Fraction: 1}, {NodeID: "n1", GPU: 1, Fraction: 1}, {NodeID: "n2", GPU: 0, Fraction: 1}}
	long := &entry{stub: &jobStub{ID: "long"}, phase: phaseRunning, held: longHeld,
		rec: &record{Submit: 1, Attained: 30, Executed: 10, LastStart: 1}, job: &cachedJob{gang: whole}}
	short := &entry{stub: &jobStub{ID: "short"}, phase: phaseQueued,
		rec: &record{Submit: 11, QueuedSince: 11}, job: &cachedJob{gang: gang{Workers: []worker{{Group: "w0", Task: "t"}}, Fraction: 1}}}
	es := []*entry{long, short}
	l := newGPUBook(nodes, es, nil)
	dec := s.decide(s.snapshot(l, l.nodeIDs(), es, 12), false)
	if len(dec.Preempts) != 1 || dec.Preempts[0] != "long" || len(dec.Starts) != 1 || dec.Starts[0].JobID != "short" {
		t.Fatalf("decision %+v: want long preempted for short", dec)
	}
	ts, err := resolve(short.job.gang, dec.Starts[0].Placement, nodes)
	if err != nil {
		t.Fatal(err)
	}
	// The long job's tasks are still checkpointing: its GPUs stay held.
	if l.fits(ts) {
		t.Fatal("the short job was offered a GPU the preempted job still holds")
	}
	v := buildView(s.pol.Name(), es, dec.Ranking, map[string]string{"short": "x"}, time.Unix(12, 0))
	if v.Jobs[1].ID != "short" || v.Jobs[1].Rank != 0 || v.Jobs[0].Queue != 1 {
		t.Fatalf("view %+v: short should rank first and long sit in queue 1", v.Jobs)
	}
}

// What was read of a job's progress file, and its convergence target,
// reach the policy (Optimus fits them) and the queue view.
func TestProgressReachesSnapshotAndView(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Token, cfg.Policy = "t", "optimus"
	s, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	one := gang{Workers: []worker{{Group: "w0", Task: "t"}}, Fraction: 1}
	run := &entry{stub: &jobStub{ID: "run"}, phase: phaseRunning, held: []target{{NodeID: "n1", GPU: 0, Fraction: 1}},
		rec: &record{Submit: 1, Executed: 10, LastStart: 1}, job: &cachedJob{gang: one, targetLoss: 0.1}}
	p := &progress{}
	p.add([]policy.ProgressPoint{{Step: 1, Loss: 2}}, 5, 1)
	p.add([]policy.ProgressPoint{{Step: 5, Loss: 1}, {Step: 9, Loss: 0.5}}, 9, 1)
	s.progress.jobs["run"] = p
	es := []*entry{run}
	snap := s.snapshot(newGPUBook(testNodes(), es, nil), sortedIDs(testNodes()), es, 12)
	j := snap.Jobs[0]
	if len(j.Progress) != 3 || j.TargetLoss != 0.1 || j.StepTimes[1] != 0.5 {
		t.Fatalf("policy job: progress %v, target %v, step times %v", j.Progress, j.TargetLoss, j.StepTimes)
	}
	v := buildView(s.pol.Name(), es, nil, nil, time.Unix(12, 0))
	s.showProgress(v)
	if v.Jobs[0].Step == nil || *v.Jobs[0].Step != 9 || *v.Jobs[0].Loss != 0.5 {
		t.Fatalf("view: %+v", v.Jobs[0])
	}
}

// countingOrder counts how often it is asked to rank.
type countingOrder struct {
	policy.Orderer
	calls int
}

func (c *countingOrder) Order(s *policy.Snapshot) []policy.Ranked {
	c.calls++
	return c.Orderer.Order(s)
}

// The ordering runs once per decision (an ordering may keep state, as
// Lucid's counters do), and the view's ranks come from that one call.
func TestDecisionCarriesTheRanking(t *testing.T) {
	s := testScheduler(t)
	fw := s.pol.(*policy.Framework)
	co := &countingOrder{Orderer: fw.Order}
	fw.Order = co
	q := func(id string, submit float64) *entry {
		return &entry{stub: &jobStub{ID: id}, phase: phaseQueued, rec: &record{Submit: submit, QueuedSince: submit, Attained: submit},
			job: &cachedJob{gang: gang{Workers: []worker{{Group: "w", Task: "t"}, {Group: "v", Task: "t"}, {Group: "u", Task: "t"}, {Group: "x", Task: "t"}, {Group: "y", Task: "t"}}, Fraction: 1}}}
	}
	es := []*entry{q("a", 1), q("b", 2)}
	dec := s.decide(s.snapshot(newGPUBook(testNodes(), es, nil), sortedIDs(testNodes()), es, 3), false)
	v := buildView(s.pol.Name(), es, dec.Ranking, dec.Waiting.Map(), time.Unix(3, 0))
	if co.calls != 1 {
		t.Fatalf("ordering asked %d times in one decision, want 1", co.calls)
	}
	if len(v.Jobs) != 2 || v.Jobs[0].ID != "a" || v.Jobs[0].Rank != 0 || v.Jobs[1].Rank != 1 {
		t.Fatalf("view %+v: want a then b, ranked 0 and 1", v.Jobs)
	}
}

// What draining jobs hold is taken off a GPU's use, and no use reads
// below zero, with or without draining jobs (a fingerprint may claim more
// free memory than the GPU has).
func TestLessDrain(t *testing.T) {
	none := map[gpuKey]use{}
	if got := lessDrain(use{Fraction: -1e-9, MemMiB: -512}, none, "n", 0); got != (use{}) {
		t.Errorf("negative use with nothing draining: %+v, want zero", got)
	}
	drain := map[gpuKey]use{{"n", 1}: {Fraction: 0.5, MemMiB: 4096}}
	if got := lessDrain(use{Fraction: 0.75, MemMiB: 6144}, drain, "n", 1); got != (use{Fraction: 0.25, MemMiB: 2048}) {
		t.Errorf("drained GPU: %+v, want 0.25 and 2048 MiB", got)
	}
	if got := lessDrain(use{Fraction: 0.25, MemMiB: 1024}, drain, "n", 1); got != (use{}) {
		t.Errorf("over-drained GPU: %+v, want zero", got)
	}
	if got := lessDrain(use{Fraction: 0.5, MemMiB: 1}, drain, "n", 0); got != (use{Fraction: 0.5, MemMiB: 1}) {
		t.Errorf("another GPU: %+v, want unchanged", got)
	}
}
