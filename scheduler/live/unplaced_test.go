package live

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// An admitted job Nomad leaves pending (bug 1's symptom: "running" in the
// queue, its GPU held) goes back to the queue after PlaceTimeout, with
// Nomad's own reason, and then waits as long before it is tried again.
func TestUnplacedAdmissionIsNoticedAndBacksOff(t *testing.T) {
	s := testScheduler(t)
	timeout := s.cfg.PlaceTimeout.Seconds()
	e := &entry{stub: &jobStub{ID: "j", Status: "pending"}, phase: phaseRunning, rec: &record{LastStart: 100}}
	if s.unplaced(e, 100+timeout-1) {
		t.Fatal("unplaced before the timeout")
	}
	if !s.unplaced(e, 100+timeout) {
		t.Fatal("a pending admitted job with no allocations past the timeout is not noticed")
	}
	// Nomad had not evaluated it yet (its broker behind): looked at again
	// a PlaceTimeout later, not requeued.
	s.placeRecheck["j"] = 100 + 2*timeout
	if s.unplaced(e, 100+2*timeout-1) || !s.unplaced(e, 100+2*timeout) || len(s.placeRecheck) != 0 {
		t.Fatalf("recheck not honoured: %v", s.placeRecheck)
	}
	if !evalPending([]*api.Evaluation{{Status: "complete", JobModifyIndex: 7}, {Status: "pending", JobModifyIndex: 7}}, 7) ||
		evalPending([]*api.Evaluation{{Status: "pending", JobModifyIndex: 6}, {Status: "blocked", JobModifyIndex: 7}}, 7) {
		t.Fatal("evalPending misreads the evaluations")
	}
	e.allocs.starting = 1
	if s.unplaced(e, 100+timeout) {
		t.Fatal("a job with an allocation starting counts as unplaced")
	}
	r := &record{PlaceFailedAt: 200, PlaceFailure: "Nomad could not place it: x"}
	if why := s.placeBackoff(r, 210); !strings.Contains(why, "Nomad could not place it: x; trying again in") {
		t.Fatalf("backoff reason %q", why)
	}
	if why := s.placeBackoff(r, 200+timeout); why != "" {
		t.Fatalf("still backing off after the timeout: %q", why)
	}
	evals := []*api.Evaluation{
		{CreateIndex: 5, FailedTGAllocs: map[string]*api.AllocationMetric{"w0": {NodesEvaluated: 2, NodesFiltered: 2}}},
		{CreateIndex: 9, FailedTGAllocs: map[string]*api.AllocationMetric{
			"w1": {DimensionExhausted: map[string]int{"memory": 1}},
			"w0": {ConstraintFiltered: map[string]int{"${attr.kernel.version} semver >= 9": 1}}}},
		{CreateIndex: 12},
	}
	want := `group "w0": constraint ${attr.kernel.version} semver >= 9 filtered; group "w1": memory exhausted`
	if got := placementFailure(evals); got != want {
		t.Fatalf("placement failure %q, want %q", got, want)
	}
}

// The mirror knows which evaluations Nomad has still to run, from the
// reconcile's list and then the Evaluation events, so an admitted job
// waiting in Nomad's broker is not taken for unplaceable and costs no read.
func TestPendingEvaluationsAreFollowed(t *testing.T) {
	s, f := observeScheduler(t)
	f.evals = []*evalStub{{ID: "e1", Namespace: "default", JobID: "a", Status: "pending", JobModifyIndex: 5, ModifyIndex: 95}}
	if _, err := s.observe(); err != nil {
		t.Fatal(err)
	}
	if !s.mirror.evalPending("a", 5) || s.mirror.evalPending("a", 6) {
		t.Fatalf("listed pending evaluation not kept: %v", s.mirror.pending)
	}
	eval := func(id, status string, jmi, index uint64) event {
		return mkEvent(t, api.TopicEvaluation, "EvaluationUpdated", index, map[string]any{"Evaluation": &evalStub{
			ID: id, Namespace: "default", JobID: "a", Status: status, JobModifyIndex: jmi, ModifyIndex: index}})
	}
	step := func(evs ...event) {
		t.Helper()
		s.feed.push(evs, false)
		if _, err := s.observe(); err != nil {
			t.Fatal(err)
		}
	}
	// The admission's evaluation arrives; the listed one completes; an
	// old event replayed (a resumed stream) changes nothing.
	step(eval("e2", "pending", 7, 130), eval("e1", "complete", 5, 131))
	if !s.mirror.evalPending("a", 7) || s.mirror.evalPending("a", 8) || len(s.mirror.pending["a"]) != 1 {
		t.Fatalf("after the events: %v", s.mirror.pending)
	}
	e := &entry{stub: &jobStub{ID: "a", Status: "pending", JobModifyIndex: 7}, phase: phaseRunning, rec: &record{LastStart: 100}}
	late := 100 + s.cfg.PlaceTimeout.Seconds()
	if s.unplaced(e, late) {
		t.Fatal("a job whose evaluation Nomad has still to run counts as unplaced")
	}
	step(eval("e2", "blocked", 7, 132), eval("e2", "pending", 7, 130))
	if s.mirror.evalPending("a", 7) || len(s.mirror.pending) != 0 {
		t.Fatalf("a blocked evaluation is still pending: %v", s.mirror.pending)
	}
	if !s.unplaced(e, late) {
		t.Fatal("a job Nomad evaluated without placing it is not noticed")
	}
	// A full reconcile starts again from Nomad's list.
	f.evals = []*evalStub{{ID: "e3", Namespace: "default", JobID: "a", Status: "pending", JobModifyIndex: 9, ModifyIndex: 99}}
	s.needFull = true
	if _, err := s.observe(); err != nil {
		t.Fatal(err)
	}
	if !s.mirror.evalPending("a", 9) || len(s.mirror.pending["a"]) != 1 {
		t.Fatalf("after a reconcile: %v", s.mirror.pending)
	}
	// An unreadable evaluation event forces a full read.
	bad := mkEvent(t, api.TopicEvaluation, "EvaluationUpdated", 140, map[string]any{"Evaluation": "x"})
	s.feed.push([]event{bad}, false)
	before := f.requests.Load()
	if _, err := s.observe(); err != nil {
		t.Fatal(err)
	}
	if f.requests.Load() == before {
		t.Fatal("an unreadable evaluation event did not make the round read Nomad afresh")
	}
}
