package live

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// A preempted job is told the policy's reason for it; no other reason is
// copied for it (the round no longer maps every queued job's reason).
func TestPreemptedWaitsAreThePolicysReasons(t *testing.T) {
	dec := policy.Decision{Preempts: []string{"a", "c"}, Waiting: policy.Waits{
		{JobID: "a", Reason: "preempted for b (higher priority)"}, {JobID: "q", Reason: "needs 8 GPUs"}}}
	why := preemptedWaits(dec)
	if len(why) != 2 || why["a"] != "preempted for b (higher priority)" || why["c"] != "" {
		t.Fatalf("preempted reasons %v", why)
	}
	if got := preemptReason(why["c"]); got != "preempted by the scheduling policy" {
		t.Fatalf("a preempted job the policy gave no reason: %q", got)
	}
	if preemptedWaits(policy.Decision{Waiting: dec.Waiting}) != nil {
		t.Fatal("a decision without preemptions maps reasons")
	}
}

// The view's reasons are the decisions', with apply's where a job the
// policy started did not start after all.
func TestWaitingMapLetsApplyHaveTheLastWord(t *testing.T) {
	m := waitingMap(policy.Waits{{JobID: "x", Reason: "needs 8 GPUs"}, {JobID: "y", Reason: "behind x"}},
		map[string]string{"z": "waiting for Nomad to place 3 admitted jobs", "y": "admitting at most 4"})
	if len(m) != 3 || m["x"] != "needs 8 GPUs" || m["y"] != "admitting at most 4" || m["z"] == "" {
		t.Fatalf("waiting map %v", m)
	}
}
