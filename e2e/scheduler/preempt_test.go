package scheduler

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Under Tiresias 2D-LAS a long gang that has attained service is preempted
// for a new short job, checkpoints on SIGTERM, and later resumes from its
// checkpoint.
func TestLASPreemptsLongJobWhichResumesFromCheckpoint(t *testing.T) {
	p := startScheduler(t, "-policy", "tiresias-las", "-queue-limits", "4")
	submit(t, work{ID: "long", Workers: 4, Seconds: 20})
	waitFor(t, 90*time.Second, "the long gang to run and leave queue 0", func() (bool, string) {
		j := p.job("long")
		if j == nil {
			return false, "not seen"
		}
		return j.State == "running" && j.Queue >= 1 && count(allocs(t, "long"), running) == 4, j.State
	})
	submit(t, work{ID: "short", Seconds: 2})
	waitDone(t, "short", 1, 90*time.Second)

	job := jobInfo(t, "long")
	if job.Meta["caravan.preemptions"] != "1" {
		t.Fatalf("long job meta %v: want one preemption", job.Meta)
	}
	waitDone(t, "long", 4, 120*time.Second)
	out := stdout(t, "long")
	ck := regexp.MustCompile(`checkpointed done=([0-9.]+)`).FindStringSubmatch(out)
	resumed := regexp.MustCompile(`start run=2 done=([0-9.]+)`).FindStringSubmatch(out)
	if ck == nil || resumed == nil {
		t.Fatalf("long job did not checkpoint and resume:\n%s", out)
	}
	saved, _ := strconv.ParseFloat(ck[1], 64)
	from, _ := strconv.ParseFloat(resumed[1], 64)
	if saved <= 0 || from <= 0 {
		t.Fatalf("checkpointed %v, resumed from %v: want progress kept\n%s", saved, from, out)
	}
	if j := p.job("long"); j == nil || j.Preemptions != 1 {
		t.Fatalf("queue view of long: %+v", j)
	}
}
