package live

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The API call counter sees every request a round makes: a full
// reconcile's lists, then none for a round fed by events.
func TestRoundCountsItsAPICalls(t *testing.T) {
	s, f := observeScheduler(t)
	if _, err := s.observe(); err != nil {
		t.Fatal(err)
	}
	if got, want := s.calls.Load(), f.requests.Load(); got != want || want == 0 {
		t.Fatalf("counted %d calls, Nomad served %d", got, want)
	}
	if got := sumVec(s.metrics.apiCalls); got != float64(s.calls.Load()) {
		t.Fatalf("caravan_scheduler_api_calls_total = %v, want %d", got, s.calls.Load())
	}
	s.calls.Store(0)
	before := f.requests.Load()
	if _, err := s.observe(); err != nil || s.calls.Load() != 0 || f.requests.Load() != before {
		t.Fatalf("an event-fed round: counted %d, Nomad served %d (%v)", s.calls.Load(), f.requests.Load()-before, err)
	}
}

// An admission rewrites a copy of the full job classify cached at the
// stub's index, without reading it again; a stale cache is read afresh.
func TestRewriteUsesTheCachedJobAtItsIndex(t *testing.T) {
	s, f := observeScheduler(t)
	job := testJob("a", map[string]any{"command": "x", "gpus": 1})
	e := &entry{stub: &jobStub{ID: "a", JobModifyIndex: 7}, job: &cachedJob{index: 7, job: job}}
	got, err := s.jobToRewrite(e)
	if err != nil || f.requests.Load() != 0 || s.calls.Load() != 0 {
		t.Fatalf("cached job: %v, %d requests", err, f.requests.Load())
	}
	got.TaskGroups[0].Tasks[0].Config["command"] = "changed"
	if *got.ID != "a" || job.TaskGroups[0].Tasks[0].Config["command"] != "x" {
		t.Fatal("the rewrite changed the cached job")
	}
	e.stub.JobModifyIndex = 8
	if _, err := s.jobToRewrite(e); err == nil || f.requests.Load() != 1 || s.calls.Load() != 1 {
		t.Fatalf("stale cache: want one fresh read (the fake's empty job is a conflict), got %v after %d requests", err, f.requests.Load())
	}
}

// sumVec is a counter vector's total over its labels.
func sumVec(v *prometheus.CounterVec) float64 {
	ch := make(chan prometheus.Metric, 64)
	go func() { v.Collect(ch); close(ch) }()
	total := 0.0
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err == nil {
			total += pb.GetCounter().GetValue()
		}
	}
	return total
}
