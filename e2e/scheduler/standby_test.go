package scheduler

import (
	"testing"
	"time"
)

// A second instance stands by while the first holds the lock, and takes
// over (and schedules) once the leader shuts down.
func TestStandbyTakesOverFromStoppedLeader(t *testing.T) {
	leader := startScheduler(t, "-policy", "fifo")
	standby := leader.peer()
	waitFor(t, 30*time.Second, "the standby to answer", func() (bool, string) {
		_, err := standby.queue()
		return err == nil, "no answer"
	})
	time.Sleep(3 * time.Second) // several lock attempts
	if v, _ := standby.queue(); v == nil || v.Leader {
		t.Fatalf("the standby leads while the leader runs: %+v", v)
	}
	if standby.metric("caravan_scheduler_rounds_total") != 0 {
		t.Fatal("the standby ran scheduling rounds")
	}

	leader.stop()
	standby.waitLeader(30 * time.Second)
	submit(t, work{ID: "after-takeover", Seconds: 1})
	waitDone(t, "after-takeover", 1, 60*time.Second)
	if n := standby.metric("caravan_scheduler_admissions_total"); n != 1 {
		t.Fatalf("the new leader admitted %v jobs, want 1", n)
	}
}
