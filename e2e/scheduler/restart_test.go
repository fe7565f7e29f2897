package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The scheduler is killed mid-run and restarted: every job still runs to
// completion, none starts twice, and attained service survives.
func TestKilledSchedulerRestartsWithNothingLost(t *testing.T) {
	waitAllGPUsFree(t) // the test needs all four GPUs at once
	p := startScheduler(t, "-policy", "fifo")
	var ids []string
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("r%d", i)
		ids = append(ids, id)
		submit(t, work{ID: id, Seconds: 5})
	}
	before := map[string]float64{}
	waitFor(t, 90*time.Second, "four jobs running with service", func() (bool, string) {
		v, err := p.queue()
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, j := range v.Jobs {
			if j.State == "running" && j.Attained > 0 {
				before[j.ID] = j.Attained
				n++
			}
		}
		return n == 4, fmt.Sprintf("%d running with service\n%s", n, clusterState(t))
	})
	time.Sleep(2500 * time.Millisecond) // let the periodic state write happen
	p.kill()

	p.start()
	p.waitLeader(60 * time.Second)
	for _, id := range ids {
		waitDone(t, id, 1, 120*time.Second)
	}
	v, err := p.queue()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		as := allocs(t, id)
		if len(as) != 1 {
			t.Errorf("%s has %d allocations, want exactly one: %s", id, len(as), describe(as))
		}
		if out := stdout(t, id); strings.Count(out, "start run=") != 1 || !strings.Contains(out, "start run=1 ") {
			t.Errorf("%s started more than once:\n%s", id, out)
		}
	}
	for _, j := range v.Jobs {
		if b, ok := before[j.ID]; ok && j.Attained < b {
			t.Errorf("%s attained %.1f GPU·s after restart, %.1f before: service lost", j.ID, j.Attained, b)
		}
	}
}
