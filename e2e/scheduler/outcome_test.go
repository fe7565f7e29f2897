package scheduler

import (
	"strings"
	"testing"
	"time"
)

// A job whose task exits 3 shows as failed, with the exit code, and keeps
// its gang's shape in the queue; a job that succeeds shows as finished.
func TestFailedJobShowsFailedWithWhy(t *testing.T) {
	p := startScheduler(t, "-policy", "fifo")
	submit(t, work{ID: "exits3", Workers: 2, Exit: 3})
	submit(t, work{ID: "succeeds", Seconds: 1})
	waitFor(t, 90*time.Second, "exits3 failed with its exit code", func() (bool, string) {
		j := p.job("exits3")
		if j == nil {
			return false, "not in the queue"
		}
		return j.State == "failed" && strings.Contains(j.Reason, "exit code 3"), j.State + ": " + j.Reason
	})
	if j := p.job("exits3"); j.Workers != 2 || j.Fraction != 1 {
		t.Errorf("failed job shape %d×%g, want 2×1", j.Workers, j.Fraction)
	}
	waitFor(t, 90*time.Second, "succeeds finished", func() (bool, string) {
		j := p.job("succeeds")
		if j == nil {
			return false, "not in the queue"
		}
		return j.State == "finished" && j.Reason == "", j.State + ": " + j.Reason
	})
}
