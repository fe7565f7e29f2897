package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A running task's progress file reaches the scheduler through Nomad's fs
// API: the queue view shows its newest step and loss, a malformed line is
// skipped and counted (not fatal), and a bad caravan.target_loss is
// refused with a reason that names it.
func TestProgressReachesTheScheduler(t *testing.T) {
	p := startScheduler(t, "-policy", "optimus")
	submit(t, work{ID: "prog", Seconds: 8, Garbage: true, Meta: map[string]string{"caravan.target_loss": "0.2"}})
	submit(t, work{ID: "prog-bad-meta", Seconds: 1, Meta: map[string]string{"caravan.target_loss": "low"}})

	waitFor(t, 90*time.Second, "two progress points of prog in the queue view", func() (bool, string) {
		j := p.job("prog")
		return j != nil && j.Step != nil && *j.Step >= 2 && *j.Loss < 0.5, fmt.Sprintf("%+v", j)
	})
	if bad := p.metric("caravan_scheduler_progress_bad_lines_total"); bad < 1 {
		t.Errorf("the malformed line was not counted: bad lines %v", bad)
	}
	if n := p.metric("caravan_scheduler_progress_points_total"); n < 2 {
		t.Errorf("progress points read %v, want ≥ 2", n)
	}
	waitFor(t, 30*time.Second, "the bad target loss explained", func() (bool, string) {
		j := p.job("prog-bad-meta")
		return j != nil && j.State == "queued" && strings.Contains(j.Reason, "caravan.target_loss"), fmt.Sprintf("%+v", j)
	})
	waitDone(t, "prog", 1, 90*time.Second)
}
