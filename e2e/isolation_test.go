package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// cpuJob is a one-task caravan batch job without GPUs running script.
func cpuJob(id, script, taskExtra string) string {
	return batchJob(id, taskExtra, fmt.Sprintf(`command = "/bin/sh"
        args = ["-c", %q]`, script))
}

// runToDead runs hcl and returns the dead allocation and its stdout.
func runToDead(t *testing.T, id, hcl string) (*api.Allocation, string) {
	t.Helper()
	if _, err := cluster.RunHCL(hcl, nil); err != nil {
		t.Fatal(err)
	}
	a, err := cluster.WaitAlloc(within(t, 90*time.Second), id, harness.TaskState("t", "dead"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cluster.Logs(a, "t", "stdout")
	return a, out
}

// A caravan task on a real agent runs isolated by default: not as root,
// without /root, without another allocation's files or processes, and
// unable to write outside its task, alloc and checkpoint dirs.
func TestIsolatedTaskIsConfined(t *testing.T) {
	if _, err := cluster.RunHCL(cpuJob("neighbour", "echo neighbour > /alloc/private; sleep 120", ""), nil); err != nil {
		t.Fatal(err)
	}
	defer stopJob(t, "neighbour")
	nb, err := cluster.WaitAlloc(within(t, 60*time.Second), "neighbour", harness.TaskState("t", "running"))
	if err != nil {
		t.Fatal(err)
	}
	nbDir := filepath.Join(cluster.Dir, cluster.Clients[0].Name, "alloc", nb.ID)
	script := `probe() { if eval "$2" >/dev/null 2>&1; then echo "$1=yes"; else echo "$1=no"; fi; }
echo "UID=$(id -u)"
probe READ_ROOT 'ls /root'
probe SEE_NEIGHBOUR 'cat ` + nbDir + `/alloc/private'
pat="slee""p 120" # not in this script's own command line
probe SEE_NEIGHBOUR_SLEEP 'grep -l "$pat" /proc/[0-9]*/cmdline'
probe PID1_IS_SELF 'grep -q probe /proc/1/cmdline'
echo "PROCS=$(ls /proc | grep -c '^[0-9][0-9]*$')"
probe WRITE_USR 'touch /usr/probe'
probe WRITE_ETC 'touch /etc/probe'
probe WRITE_HOST_TMP 'touch ` + filepath.Join(cluster.Dir, "probe") + `'
probe WRITE_CKPT 'touch /caravan/checkpoint/probe'
probe WRITE_ALLOC 'touch /alloc/probe'
probe WRITE_LOCAL 'touch /local/probe'`
	a, out := runToDead(t, "confined", cpuJob("confined", script, ""))
	defer stopJob(t, "confined")
	t.Logf("stdout:\n%s\nevents:\n%s", out, harness.Events(a, "t"))
	env := envOf(out)
	want := map[string]string{
		"READ_ROOT": "no", "SEE_NEIGHBOUR": "no", "SEE_NEIGHBOUR_SLEEP": "no", "PID1_IS_SELF": "yes",
		"WRITE_USR": "no", "WRITE_ETC": "no", "WRITE_HOST_TMP": "no",
		"WRITE_CKPT": "yes", "WRITE_ALLOC": "yes", "WRITE_LOCAL": "yes",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if uid, err := strconv.Atoi(env["UID"]); err != nil || uid == 0 {
		t.Errorf("task uid %q, want a non-root uid", env["UID"])
	}
	// The shell, the $(...) subshell, ls and grep: a private PID namespace.
	if n, err := strconv.Atoi(env["PROCS"]); err != nil || n > 4 {
		t.Errorf("task sees %q processes, want only its own (private PID namespace)", env["PROCS"])
	}
	node, _, err := cluster.API.Nodes().Info(a.NodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Attributes["driver.caravan.isolation"]; got != "chroot" {
		t.Errorf("node attribute driver.caravan.isolation = %q, want chroot", got)
	}
}

// `user = "root"` is refused with an event that says what to change.
func TestRootUserRefusedWithClearEvent(t *testing.T) {
	a, _ := runToDead(t, "as-root", cpuJob("as-root", "id -u", `user = "root"`))
	defer stopJob(t, "as-root")
	events := harness.Events(a, "t")
	t.Logf("events:\n%s", events)
	if !a.TaskStates["t"].Failed || !strings.Contains(events, "root (uid 0)") || !strings.Contains(events, "allow_root = true") {
		t.Errorf("a root task should fail with an event naming allow_root; events:\n%s", events)
	}
}

// Issue 9, item 3 on a real agent: a stopped job run again resumes its
// checkpoint; a purged job registered again under the same name does not.
func TestCheckpointBelongsToOneRunOfTheJob(t *testing.T) {
	script := `echo "FOUND=$(cat /caravan/checkpoint/state 2>/dev/null || echo none)"; echo kept > /caravan/checkpoint/state; exit 1`
	hcl := cpuJob("ckpt-run", script, "")
	prev, out := runToDead(t, "ckpt-run", hcl)
	if got := envOf(out)["FOUND"]; got != "none" {
		t.Fatalf("first run found %q", got)
	}
	first := hostCheckpointDir(t, "ckpt-run", "g", "t")
	if _, _, err := cluster.API.Jobs().Deregister("ckpt-run", false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.RunHCL(hcl, nil); err != nil {
		t.Fatal(err)
	}
	a, err := cluster.WaitAlloc(within(t, 60*time.Second), "ckpt-run", func(x *api.Allocation) bool {
		return x.ID != prev.ID && harness.TaskState("t", "dead")(x)
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ = cluster.Logs(a, "t", "stdout")
	if got := envOf(out)["FOUND"]; got != "kept" {
		t.Errorf("the stopped job, run again, found %q; want its checkpoint", got)
	}
	stopJob(t, "ckpt-run") // stop and purge
	_, out = runToDead(t, "ckpt-run", hcl)
	defer stopJob(t, "ckpt-run")
	if got := envOf(out)["FOUND"]; got != "none" {
		t.Errorf("a purged and recreated job found %q; want a fresh checkpoint", got)
	}
	if second := hostCheckpointDir(t, "ckpt-run", "g", "t"); second == first {
		t.Errorf("the recreated job reuses checkpoint dir %s", first)
	}
}
