package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// A job whose caravan.pool has no capable node, names the queue itself or
// names no pool waits with a one-line reason, holds no GPU, and is never
// rewritten: every GPU of the default pool stays free for other jobs.
func TestBadPoolsWaitWithAReasonAndHoldNoGPU(t *testing.T) {
	p := startScheduler(t, "-policy", "fifo")
	if _, err := cluster.API.NodePools().Register(&api.NodePool{Name: "restricted"}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.API.NodePools().Delete("restricted", nil) })
	bad := map[string]string{
		"pooled":  `no ready node with caravan GPUs in pool "restricted"`,
		"selfish": "is the queue pool itself",
		"nopool":  `"no-such-pool": Nomad has no such node pool`,
	}
	pools := map[string]string{"pooled": "restricted", "selfish": "caravan-queue", "nopool": "no-such-pool"}
	for id := range bad {
		submit(t, work{ID: id, Seconds: 60, Meta: map[string]string{"caravan.pool": pools[id]}})
	}
	for id, want := range bad {
		waitFor(t, 30*time.Second, id+" explained", func() (bool, string) {
			j := p.job(id)
			if j == nil {
				return false, "not in the queue"
			}
			return j.State == "queued" && strings.Contains(j.Reason, want), j.State + ": " + j.Reason
		})
	}
	errs := p.metric("caravan_scheduler_errors_total")
	// All four GPUs are free: four one-GPU jobs run at once.
	ok := []string{"ok-a", "ok-b", "ok-c", "ok-d"}
	for _, id := range ok {
		submit(t, work{ID: id, Seconds: 8})
	}
	waitFor(t, 90*time.Second, "four jobs running together", func() (bool, string) {
		n := 0
		for _, id := range ok {
			n += count(allocs(t, id), running)
		}
		return n == 4, clusterState(t)
	})
	for id := range bad {
		j := jobInfo(t, id)
		if *j.Version != 0 || *j.NodePool != "caravan-queue" || len(allocs(t, id)) != 0 {
			t.Errorf("%s was rewritten or placed: version %d, pool %s", id, *j.Version, *j.NodePool)
		}
		if r := p.job(id).Reason; strings.Contains(r, "\n") {
			t.Errorf("%s: multi-line reason %q", id, r)
		}
	}
	if now := p.metric("caravan_scheduler_errors_total"); now != errs {
		t.Errorf("failed Nomad operations grew from %v to %v while bad pools waited", errs, now)
	}
	// Creating the missing pool is seen well before the minute-long full
	// reconcile (pools are not on the event stream; see live/feed.go).
	if _, err := cluster.API.NodePools().Register(&api.NodePool{Name: "no-such-pool"}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.API.NodePools().Delete("no-such-pool", nil) })
	waitFor(t, 20*time.Second, "the new pool seen", func() (bool, string) {
		j := p.job("nopool")
		if j == nil {
			return false, "not in the queue"
		}
		return strings.Contains(j.Reason, `no ready node with caravan GPUs in pool "no-such-pool"`), j.Reason
	})
}

// The queue holds exactly what the driver would refuse, in the driver's
// words naming the field, and takes what the driver takes (a string
// gpu_fraction).
func TestQueueAndDriverAgreeOnConfigs(t *testing.T) {
	p := startScheduler(t, "-policy", "fifo")
	bad := map[string]string{
		"both":  `gpus and gpu_fraction: set one or the other`,
		"typo":  "gpu_fractoin: not a caravan config key",
		"nan":   `gpu_memory: "NaN" is not a size`,
		"words": `gpu_fraction: "abc" must be a number`,
	}
	asks := map[string]string{
		"both": "gpus = 1\n        gpu_fraction = 0.5", "typo": "gpu_fractoin = 0.5",
		"nan": "gpu_fraction = 0.5\n        gpu_memory = \"NaN\"", "words": `gpu_fraction = "abc"`,
	}
	for id, ask := range asks {
		submit(t, work{ID: id, Ask: ask, Seconds: 1})
	}
	submit(t, work{ID: "string-fraction", Ask: `gpu_fraction = "0.5"`, Seconds: 1})
	for id, want := range bad {
		waitFor(t, 30*time.Second, id+" explained", func() (bool, string) {
			j := p.job(id)
			if j == nil {
				return false, "not in the queue"
			}
			return j.State == "queued" && strings.Contains(j.Reason, want), j.State + ": " + j.Reason
		})
	}
	waitDone(t, "string-fraction", 1, 60*time.Second)
}

// An admitted job Nomad cannot place (it asks more memory than any node
// has, which the scheduler does not model) returns to the queue after
// -place-timeout with Nomad's reason, instead of showing "running" and
// holding its GPU for ever.
func TestUnplaceableAdmissionReturnsToTheQueue(t *testing.T) {
	p := startScheduler(t, "-policy", "fifo", "-place-timeout", "4s")
	submit(t, work{ID: "huge", Seconds: 1, MemoryMB: 4 << 20})
	waitFor(t, 60*time.Second, "huge back in the queue with Nomad's reason", func() (bool, string) {
		j := p.job("huge")
		if j == nil {
			return false, "not in the queue"
		}
		return j.State == "queued" && strings.Contains(j.Reason, "Nomad could not place it") && strings.Contains(j.Reason, "memory"),
			j.State + ": " + j.Reason
	})
	if pool := *jobInfo(t, "huge").NodePool; pool != "caravan-queue" {
		t.Fatalf("unplaced job left in pool %s", pool)
	}
}
