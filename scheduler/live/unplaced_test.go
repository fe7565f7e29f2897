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
