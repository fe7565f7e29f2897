package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A user updates a queued job while the scheduler is admitting it: the
// scheduler's check-and-set write fails, it re-reads, and the user's
// version is the one that runs.
func TestUserUpdateDuringAdmissionSurvives(t *testing.T) {
	p := startScheduler(t, "-policy", "fifo", "-test-admit-delay", "3s")
	submit(t, work{ID: "race", Seconds: 1, Tag: "v1"})
	waitFor(t, 60*time.Second, "the scheduler to start admitting", func() (bool, string) {
		return p.metric("caravan_scheduler_admit_attempts_total") >= 1, "no attempt yet"
	})
	if _, err := cluster.RunHCL(work{ID: "race", Workers: 1, Seconds: 1, Tag: "v2"}.hcl(), nil); err != nil {
		t.Fatal(err)
	}
	waitDone(t, "race", 1, 90*time.Second)
	if n := p.metric("caravan_scheduler_cas_conflicts_total"); n < 1 {
		t.Fatalf("no check-and-set conflict was seen (%v): the test did not race", n)
	}
	out := stdout(t, "race")
	if !strings.Contains(out, "tag=v2") || strings.Contains(out, "tag=v1") {
		t.Fatalf("the user's update was lost:\n%s", out)
	}
	args := jobInfo(t, "race").TaskGroups[0].Tasks[0].Config["args"]
	if !strings.Contains(fmt.Sprint(args), "v2") {
		t.Fatalf("job args %v lost the user's tag", args)
	}
}
