package live

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestPhaseAndHoldingsFromNomad(t *testing.T) {
	s := testScheduler(t)
	cases := []struct {
		stub jobStub
		want phase
	}{
		{jobStub{NodePool: "caravan-queue", Status: "pending"}, phaseQueued},
		{jobStub{NodePool: "default", Status: "running", Meta: map[string]string{MetaAdmitted: "x"}}, phaseRunning},
		{jobStub{NodePool: "default", Status: "dead", Meta: map[string]string{MetaAdmitted: "x"}}, phaseDone},
		{jobStub{NodePool: "caravan-queue", Stop: true}, phaseGone},
	}
	for _, c := range cases {
		if got := s.phaseOf(&c.stub); got != c.want {
			t.Errorf("%+v: phase %s, want %s", c.stub, got, c.want)
		}
	}
	if s.managed(&jobStub{Type: "batch", NodePool: "default"}) || s.managed(&jobStub{Type: "system", NodePool: "caravan-queue"}) {
		t.Error("a job outside caravan's pools (or a system job) counts as managed")
	}

	// A preempted job whose allocations still drain holds its last placement.
	e := &entry{stub: &jobStub{ID: "p"}, phase: phaseQueued, rec: &record{Placement: "w0=n1/1/GPU-b/1/0", Accounted: 5},
		allocs: summarise([]*api.AllocationListStub{{DesiredStatus: "stop", ClientStatus: "running"}})}
	s.account(e, 10, nil)
	if len(e.held) != 1 || e.held[0].NodeID != "n1" || e.rec.Accounted != 0 || e.rec.QueuedSince != 10 {
		t.Fatalf("draining job: held %+v record %+v", e.held, e.rec)
	}
	// A running job accrues service at its gang's GPU share.
	r := &entry{stub: &jobStub{ID: "r", Meta: map[string]string{MetaPlacement: "a=n1/0/G/0.5/0;b=n1/1/G/0.5/0"}}, phase: phaseRunning,
		rec: &record{Accounted: 10}, allocs: jobAllocs{running: 2}}
	s.account(r, 14, nil)
	if r.rec.Attained != 4 || r.rec.Executed != 4 {
		t.Fatalf("running job attained %v executed %v, want 4 and 4", r.rec.Attained, r.rec.Executed)
	}
	// Accrual beginning is written soon (the state turns dirty): a
	// scheduler restarted before the next periodic write must still know
	// since when the job ran. Accrual going on is left to that write.
	s.dirty = false
	s.account(r, 15, nil)
	if s.dirty {
		t.Fatal("a job that went on running made the state dirty")
	}
	started := &entry{stub: r.stub, phase: phaseRunning, rec: &record{}, allocs: jobAllocs{running: 2}}
	s.account(started, 16, nil)
	if !s.dirty || started.rec.Accounted != 16 {
		t.Fatalf("a job seen running for the first time: dirty %v, accounted from %v", s.dirty, started.rec.Accounted)
	}
}

// A corrupt caravan.placement is not silently "no GPUs": it is counted,
// logged once, and shown where the placement would be.
func TestCorruptPlacementIsCountedAndShown(t *testing.T) {
	s := testScheduler(t)
	e := &entry{stub: &jobStub{ID: "r", Meta: map[string]string{MetaPlacement: "a=n1/x/G/1/0"}}, phase: phaseRunning,
		rec: &record{}, allocs: jobAllocs{running: 1}}
	s.account(e, 10, nil)
	s.account(e, 11, nil)
	if counterValue(s.metrics.badPlacements) != 2 || e.badPlacement == "" || s.badLogged["r"] != "a=n1/x/G/1/0" {
		t.Fatalf("bad placements %v, entry %q", counterValue(s.metrics.badPlacements), e.badPlacement)
	}
	v := buildView("p", []*entry{e}, nil, nil, time.Unix(11, 0))
	if !strings.Contains(v.Jobs[0].Placement, "unreadable placement in caravan.placement") {
		t.Fatalf("view placement %q", v.Jobs[0].Placement)
	}
}

func FuzzDecodePlacement(f *testing.F) {
	for _, s := range []string{"", "w0=n1/1/GPU-b/1/0", "a=n1/0/G/0.5/0;b=n1/1/G/0.5/300", "a=n1/x/G/1/0", "=//////", "a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := decodePlacement(s)
		if err != nil {
			return
		}
		again, err := decodePlacement(encodePlacement(ts))
		if err != nil || len(again) != len(ts) {
			t.Fatalf("%q: re-encoding %q does not decode: %v", s, encodePlacement(ts), err)
		}
	})
}

// Bug 7: per-job state of one run must not leak into the next, and
// service must not be lost when a job ends between rounds.
func TestRunsStartFreshAndServiceCountsToTheRealEnd(t *testing.T) {
	s := testScheduler(t)
	queued := func(create uint64, submitNs int64) *world {
		return &world{jobs: []*jobStub{{ID: "j", Type: "batch", NodePool: "caravan-queue", CreateIndex: create, SubmitTime: submitNs}}}
	}
	s.jobs["j"] = &cachedJob{gang: gang{Workers: []worker{{Group: "w0", Task: "work"}}, Fraction: 1}} // no Nomad here
	// First sight: submit time is Nomad's, not the scheduler's clock.
	es := s.classify(queued(7, 40e9), 100)
	if r := es[0].rec; r.Submit != 40 || r.QueuedSince != 40 || r.CreateIndex != 7 {
		t.Fatalf("first record %+v", r)
	}
	// It ran on one whole GPU from 100, was accounted at 110, and its task
	// ended at 130, while the scheduler was down; it is seen dead at 200.
	r := es[0].rec
	r.Placement, r.Accounted, r.Attained, r.Executed, r.Preemptions = "w0=n1/0/G/1/0", 110, 10, 10, 1
	dead := &world{jobs: []*jobStub{{ID: "j", Type: "batch", NodePool: "default", Status: "dead", CreateIndex: 7,
		Meta: map[string]string{MetaAdmitted: "x"}}},
		allocs: map[string][]*api.AllocationListStub{"j": {{ClientStatus: "complete", TaskStates: map[string]*api.TaskState{"work": {FinishedAt: time.Unix(130, 0)}}}}}}
	s.classify(dead, 200)
	if r.Attained != 30 || r.FinishedAt != 130 {
		t.Fatalf("finished record %+v: want 30 GPU·s attained, finished at 130", r)
	}
	// Re-run after it finished: a fresh record from the new submit time.
	s.progress.jobs["j"] = &progress{alloc: "old"}
	es = s.classify(queued(7, 300e9), 301)
	if r := es[0].rec; r.Attained != 0 || r.Preemptions != 0 || r.FinishedAt != 0 || r.Submit != 300 {
		t.Fatalf("re-run kept the last run: %+v", r)
	}
	if s.progress.jobs["j"] != nil {
		t.Fatal("re-run kept the last run's progress")
	}
	// Purged and re-created under the same name (new create index).
	es[0].rec.Attained = 5
	es = s.classify(queued(9, 400e9), 401)
	if r := es[0].rec; r.Attained != 0 || r.CreateIndex != 9 || r.Submit != 400 {
		t.Fatalf("re-created job kept the old record: %+v", r)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}
