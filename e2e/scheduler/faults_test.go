package scheduler

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// A Nomad client is restarted while a caravan task runs: the driver
// recovers the task, so it is the same allocation and the same process,
// never started again, and the scheduler neither preempts nor re-admits it.
func TestClientRestartRecoversRunningTask(t *testing.T) {
	p := startScheduler(t, "-policy", "fifo")
	tag := fmt.Sprintf("recover-%d", time.Now().UnixNano())
	submit(t, work{ID: "crestart", Seconds: 30, Tag: tag})
	var alloc string
	waitFor(t, 90*time.Second, "crestart running", func() (bool, string) {
		as := allocs(t, "crestart")
		if len(as) == 1 && running(as[0]) {
			alloc = as[0].ID
			return true, ""
		}
		return false, describe(as)
	})
	pid := taskPID(t, tag)
	client := clientOf(t, "crestart")
	t.Logf("restarting %s while task pid %d runs", client.Name, pid)
	if err := client.Restart(20 * time.Second); err != nil {
		t.Fatalf("restart %s: %v", client.Name, err)
	}
	waitNodesReady(t)
	waitFor(t, 60*time.Second, "the task recovered, still running", func() (bool, string) {
		as := allocs(t, "crestart")
		return len(as) == 1 && running(as[0]) && as[0].ID == alloc, describe(as)
	})
	if got := taskPID(t, tag); got != pid {
		t.Fatalf("task process is %d after the client restart, was %d: restarted, not recovered", got, pid)
	}
	waitDone(t, "crestart", 1, 120*time.Second)
	as := allocs(t, "crestart")
	if len(as) != 1 || as[0].ID != alloc || as[0].TaskStates["work"].Restarts != 0 {
		t.Fatalf("want the one allocation %s, never restarted: %s", alloc, describe(as))
	}
	if out := stdout(t, "crestart"); strings.Count(out, "start run=") != 1 {
		t.Fatalf("the task started more than once:\n%s", out)
	}
	if n := p.metric("caravan_scheduler_preemptions_total"); n != 0 {
		t.Fatalf("%v preemptions", n)
	}
	if n := p.metric("caravan_scheduler_admissions_total"); n != 1 {
		t.Fatalf("%v admissions, want 1", n)
	}
}

// The Nomad server is restarted while jobs are queued and running: the
// scheduler reconnects (its event stream reconciles in full) and resumes;
// every job runs to completion exactly once.
func TestServerRestartMidScheduling(t *testing.T) {
	useCluster(t)
	waitAllGPUsFree(t)
	p := startScheduler(t, "-policy", "fifo")
	var ids []string
	for i := 0; i < 7; i++ {
		id := fmt.Sprintf("srestart%d", i)
		ids = append(ids, id)
		submit(t, work{ID: id, Seconds: 8})
	}
	waitFor(t, 90*time.Second, "four jobs running", func() (bool, string) {
		v, err := p.queue()
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, j := range v.Jobs {
			if j.State == "running" {
				n++
			}
		}
		return n == 4, fmt.Sprintf("%d running", n)
	})
	reconciles := p.metric("caravan_scheduler_full_reconciles_total")
	if err := cluster.Server.Restart(20 * time.Second); err != nil {
		t.Fatalf("restart the server: %v", err)
	}
	waitNodesReady(t)
	// One more job submitted after the restart, so the resumed scheduler
	// also admits work it never saw before.
	ids = append(ids, "srestart-late")
	submit(t, work{ID: "srestart-late", Seconds: 3})
	for _, id := range ids {
		waitDone(t, id, 1, 180*time.Second)
	}
	for _, id := range ids {
		as := allocs(t, id)
		if count(as, completed) != 1 {
			t.Errorf("%s: want exactly one completed allocation: %s", id, describe(as))
		}
		if out := stdout(t, id); strings.Count(out, "start run=") != 1 {
			t.Errorf("%s started more than once:\n%s", id, out)
		}
	}
	if n := p.metric("caravan_scheduler_full_reconciles_total"); n <= reconciles {
		t.Errorf("full reconciles %v after the restart, %v before: the broken stream was not healed", n, reconciles)
	}
	if n := p.metric("caravan_scheduler_events_applied_total"); n == 0 {
		t.Error("no event applied: the scheduler did not follow the stream")
	}
}

// taskPID finds the sched_work.py process started with tag.
func taskPID(t *testing.T, tag string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("--tag\x00" + tag + "\x00")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, want) && bytes.Contains(cmd, []byte("sched_work.py")) {
			return pid
		}
	}
	t.Fatalf("no process with --tag %s", tag)
	return 0
}

// clientOf is the client agent running a job's (only) allocation.
func clientOf(t *testing.T, id string) *harness.Agent {
	t.Helper()
	as := allocs(t, id)
	if len(as) == 0 {
		t.Fatalf("%s has no allocation", id)
	}
	for _, c := range cluster.Clients {
		if c.Name == as[0].NodeName {
			return c
		}
	}
	t.Fatalf("no client agent named %s", as[0].NodeName)
	return nil
}

// waitNodesReady waits until every client node is ready with a healthy
// caravan driver again.
func waitNodesReady(t *testing.T) {
	t.Helper()
	waitFor(t, 90*time.Second, "every node ready with the caravan driver", func() (bool, string) {
		stubs, _, err := cluster.API.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, s := range stubs {
			if d := s.Drivers["caravan"]; s.Status == "ready" && d != nil && d.Healthy {
				ready++
			}
		}
		return ready == len(cluster.Clients), fmt.Sprintf("%d of %d ready", ready, len(cluster.Clients))
	})
}
