package scheduler

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// work is a sched_work.py job: workers groups of one caravan task each.
type work struct {
	ID       string
	Workers  int
	Fraction float64 // 0 = a whole GPU
	Seconds  float64
	Tag      string
	Pool     string // default caravan-queue; "default" submits past the scheduler
	Meta     map[string]string
	// Garbage makes the task write a malformed progress line first.
	Garbage bool
	// Exit, when not 0, makes the task exit with this code at once.
	Exit int
	// Extra is raw HCL put inside the job block (e.g. a constraint).
	Extra string
	// Ask replaces the GPU ask in the task config (default gpus = 1).
	Ask string
	// MemoryMB is the task's memory ask (default 64).
	MemoryMB int
}

func (w work) hcl() string {
	var b strings.Builder
	pool := w.Pool
	if pool == "" {
		pool = "caravan-queue"
	}
	fmt.Fprintf(&b, "job %q {\n  type = \"batch\"\n  node_pool = %q\n", w.ID, pool)
	if len(w.Meta) > 0 {
		b.WriteString("  meta = {\n")
		for k, v := range w.Meta {
			fmt.Fprintf(&b, "    %q = %q\n", k, v)
		}
		b.WriteString("  }\n")
	}
	b.WriteString(w.Extra)
	command := "/usr/bin/python3"
	args := fmt.Sprintf(`"%s/sched_work.py", "--seconds", "%g", "--tag", "%s"`, harness.TaskWorkloads, w.Seconds, w.Tag)
	if w.Garbage {
		command = "/bin/sh"
		args = fmt.Sprintf(`"-c", "echo '{not json' >> \"$CARAVAN_PROGRESS_FILE\"; exec /usr/bin/python3 %s/sched_work.py --seconds %g --tag '%s'"`, harness.TaskWorkloads, w.Seconds, w.Tag)
	}
	if w.Exit != 0 {
		command, args = "/bin/sh", fmt.Sprintf(`"-c", "exit %d"`, w.Exit)
	}
	ask := "gpus = 1"
	if w.Fraction > 0 {
		ask = fmt.Sprintf("gpu_fraction = %g", w.Fraction)
	}
	if w.Ask != "" {
		ask = w.Ask
	}
	for i := 0; i < w.Workers; i++ {
		fmt.Fprintf(&b, `  group "w%d" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "work" {
      driver       = "caravan"
      kill_signal  = "SIGTERM"
      kill_timeout = "15s"
      config {
        command = %q
        args    = [%s]
        %s
      }
      resources {
        cpu    = 50
        memory = %d
      }
    }
  }
`, i, command, args, ask, max(w.MemoryMB, 64))
	}
	b.WriteString("}\n")
	return b.String()
}

func submit(t testing.TB, w work) {
	t.Helper()
	if w.Workers == 0 {
		w.Workers = 1
	}
	if _, err := cluster.RunHCL(w.hcl(), nil); err != nil {
		t.Fatalf("submit %s: %v", w.ID, err)
	}
	t.Cleanup(func() { purge(w.ID) })
}

// purge removes a job and waits for its tasks to end, so tests do not
// share GPUs.
func purge(id string) {
	cluster.StopJob(id, 30*time.Second)
}

// allocs lists a job's allocations, oldest first, with full detail.
func allocs(t testing.TB, id string) []*api.Allocation {
	t.Helper()
	stubs, _, err := cluster.API.Jobs().Allocations(id, true, nil)
	if err != nil {
		t.Fatalf("allocations of %s: %v", id, err)
	}
	var out []*api.Allocation
	for _, s := range stubs {
		a, _, err := cluster.API.Allocations().Info(s.ID, nil)
		if err == nil {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
	return out
}

func jobInfo(t testing.TB, id string) *api.Job {
	t.Helper()
	j, _, err := cluster.API.Jobs().Info(id, nil)
	if err != nil {
		t.Fatalf("job %s: %v", id, err)
	}
	return j
}

// count returns how many allocations match.
func count(as []*api.Allocation, match func(*api.Allocation) bool) int {
	n := 0
	for _, a := range as {
		if match(a) {
			n++
		}
	}
	return n
}

func running(a *api.Allocation) bool {
	ts := a.TaskStates["work"]
	return a.ClientStatus == "running" && ts != nil && ts.State == "running"
}

// completed: the task ran to its end (not stopped by preemption).
func completed(a *api.Allocation) bool {
	return a.ClientStatus == "complete" && a.DesiredStatus == "run"
}

// stdout concatenates the task's output of every allocation of a job.
func stdout(t testing.TB, id string) string {
	t.Helper()
	var b strings.Builder
	for _, a := range allocs(t, id) {
		s, err := cluster.Logs(a, "work", "stdout")
		if err != nil {
			t.Logf("logs of %s: %v", a.ID, err)
		}
		fmt.Fprintf(&b, "[alloc %s %s]\n%s", a.ID[:8], a.TaskGroup, s)
	}
	return b.String()
}

// waitDone waits until every worker group of a job completed its work.
func waitDone(t testing.TB, id string, workers int, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, id+" completes", func() (bool, string) {
		as := allocs(t, id)
		return count(as, completed) >= workers, describe(as)
	})
}

func describe(as []*api.Allocation) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, fmt.Sprintf("%s/%s client=%s desired=%s", a.ID[:8], a.TaskGroup, a.ClientStatus, a.DesiredStatus))
	}
	return strings.Join(parts, "; ")
}

// clusterState describes every live allocation and each node's caravan
// GPU attributes, for failure messages about GPUs that look taken.
func clusterState(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	stubs, _, err := cluster.API.Allocations().List(nil)
	if err != nil {
		return err.Error()
	}
	for _, a := range stubs {
		if a.ClientStatus == "running" || a.ClientStatus == "pending" {
			fmt.Fprintf(&b, "live alloc %s job=%s group=%s node=%s desired=%s\n", a.ID[:8], a.JobID, a.TaskGroup, a.NodeID[:8], a.DesiredStatus)
		}
	}
	nodes, _, err := cluster.API.Nodes().List(nil)
	if err != nil {
		return b.String() + err.Error()
	}
	for _, stub := range nodes {
		n, _, err := cluster.API.Nodes().Info(stub.ID, nil)
		if err != nil {
			continue
		}
		var attrs []string
		for k, v := range n.Attributes {
			if strings.HasPrefix(k, "driver.caravan.gpu.") && (strings.Contains(k, "used") || strings.Contains(k, "free") || strings.Contains(k, "task")) {
				attrs = append(attrs, k+"="+v)
			}
		}
		sort.Strings(attrs)
		fmt.Fprintf(&b, "node %s: %s\n", stub.ID[:8], strings.Join(attrs, " "))
	}
	return b.String()
}

// waitAllGPUsFree waits until every node's fingerprint shows its GPUs
// free. A Nomad client coalesces node updates for seconds, so right after
// an earlier test's jobs ended the servers may still see a GPU in use;
// tests that count on every GPU wait for this first.
func waitAllGPUsFree(t testing.TB) {
	t.Helper()
	useCluster(t) // a test run alone may call this first
	waitFor(t, 60*time.Second, "every GPU free in the node fingerprints", func() (bool, string) {
		nodes, _, err := cluster.API.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		for _, stub := range nodes {
			n, _, err := cluster.API.Nodes().Info(stub.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			for k, v := range n.Attributes {
				if strings.HasPrefix(k, "unique.driver.caravan.gpu.") && strings.HasSuffix(k, ".free_fraction") && v != "1" {
					return false, stub.Name + " " + k + "=" + v
				}
			}
		}
		return true, ""
	})
}
