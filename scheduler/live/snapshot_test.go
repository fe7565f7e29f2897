package live

import (
	"testing"
	"time"
)

// The policy sees what the scheduler reads from Nomad: under LAS with a
// small limit, a running gang with much service is preempted for a new
// queued job, and the start waits until the preempted GPUs are released.
func TestLASDecisionFromObservedJobs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Token, cfg.Policy, cfg.LASLimits = "t", "tiresias-las", []float64{4}
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
	l := newLedger(nodes, es, nil)
	dec := s.pol.Decide(s.snapshot(l, es, 12))
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
	v := buildView(s.pol.Name(), es, ranks(s.pol, s.snapshot(l, es, 12)), map[string]string{"short": "x"}, time.Unix(12, 0))
	if v.Jobs[1].ID != "short" || v.Jobs[1].Rank != 0 || v.Jobs[0].Queue != 1 {
		t.Fatalf("view %+v: short should rank first and long sit in queue 1", v.Jobs)
	}
}
