package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// stopJob stops a job and waits until it holds nothing, so the next test
// finds the GPU free.
func stopJob(t testing.TB, id string) {
	t.Helper()
	if err := cluster.StopJob(id, 60*time.Second); err != nil {
		t.Error(err)
	}
}

// envOf parses KEY=VALUE lines of a task's stdout.
func envOf(out string) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env
}

// batchJob is a one-task caravan batch job that neither restarts nor
// reschedules, so a failure shows at once; config is the task's config body.
func batchJob(id, taskExtra, config string) string {
	return fmt.Sprintf(`
job %q {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "caravan"
      %s
      config {
        %s
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`, id, taskExtra, config)
}

func shJob(id, script string, fraction float64, extraTask string) string {
	return batchJob(id, extraTask, fmt.Sprintf(`command = "/bin/sh"
        args = ["-c", %q]
        gpu_fraction = %g`, script, fraction))
}

// (1) A jobspec from jobspecs/ runs; its output shows the GPU environment.
func TestSharedGPUJobspecShowsEnvironment(t *testing.T) {
	job, err := cluster.RunFile(repoPath(t, "jobspecs", "shared-gpu.nomad.hcl"), map[string]string{"hold_seconds": "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer stopJob(t, *job.ID)
	envs := map[string]map[string]string{}
	for _, task := range []string{"left", "right"} {
		a, err := cluster.WaitAlloc(within(t, 90*time.Second), *job.ID, harness.TaskState(task, "dead"))
		if err != nil {
			t.Fatal(err)
		}
		if a.TaskStates[task].Failed {
			t.Fatalf("task %s failed:\n%s", task, harness.Events(a, task))
		}
		out, err := cluster.Logs(a, task, "stdout")
		if err != nil {
			t.Fatal(err)
		}
		envs[task] = envOf(out)
		t.Logf("%s:\n%s", task, out)
	}
	l, r := envs["left"], envs["right"]
	if !strings.HasPrefix(l["CUDA_VISIBLE_DEVICES"], "GPU-") || l["CUDA_VISIBLE_DEVICES"] != r["CUDA_VISIBLE_DEVICES"] {
		t.Errorf("both halves should see the same GPU: left %q right %q", l["CUDA_VISIBLE_DEVICES"], r["CUDA_VISIBLE_DEVICES"])
	}
	for _, e := range []map[string]string{l, r} {
		if e["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] != "50" {
			t.Errorf("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = %q, want 50", e["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"])
		}
		if e["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] != "0=8192M" {
			t.Errorf("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT = %q, want 0=8192M", e["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"])
		}
		if e["CARAVAN_GPU_BACKEND"] != "simulated" {
			t.Errorf("CARAVAN_GPU_BACKEND = %q, want simulated", e["CARAVAN_GPU_BACKEND"])
		}
		for _, k := range []string{"CARAVAN_CHECKPOINT_DIR", "CARAVAN_PROGRESS_FILE"} {
			if e[k] == "" {
				t.Errorf("%s missing", k)
			}
		}
	}
}

// (2) Two tasks at 0.5 share the GPU; a third asking 0.6 fails clearly and
// the two keep running.
func TestOversubscribedGPUFailsClearly(t *testing.T) {
	var ids []string
	for _, id := range []string{"half-a", "half-b"} {
		if _, err := cluster.RunHCL(shJob(id, "sleep 120", 0.5, ""), nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		defer stopJob(t, id)
	}
	for _, id := range ids {
		if _, err := cluster.WaitAlloc(within(t, 60*time.Second), id, harness.TaskState("t", "running")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cluster.RunHCL(shJob("too-big", "sleep 120", 0.6, ""), nil); err != nil {
		t.Fatal(err)
	}
	defer stopJob(t, "too-big")
	a, err := cluster.WaitAlloc(within(t, 60*time.Second), "too-big", func(a *api.Allocation) bool {
		ts := a.TaskStates["t"]
		return ts != nil && ts.Failed
	})
	if err != nil {
		t.Fatal(err)
	}
	events := harness.Events(a, "t")
	t.Logf("events of the 0.6 task:\n%s", events)
	if !strings.Contains(events, "does not fit") || !strings.Contains(events, "0.6") {
		t.Errorf("failure event should say the 0.6 fraction does not fit; got:\n%s", events)
	}
	for _, id := range ids {
		if _, err := cluster.WaitAlloc(within(t, 5*time.Second), id, harness.TaskState("t", "running")); err != nil {
			t.Errorf("%s was disturbed: %v", id, err)
		}
	}
}

// (3) The plugin is killed while a task runs: the task keeps running, is
// recovered, and its exit code is reported.
func TestTaskSurvivesPluginKill(t *testing.T) {
	// The task is isolated, so the test signals it rather than leaving a
	// file it could not see; the signal also goes through the recovered
	// driver.
	script := "trap 'echo finishing; exit 3' USR1; echo started $$; while true; do sleep 0.2; done"
	if _, err := cluster.RunHCL(shJob("survivor", script, 0.25, ""), nil); err != nil {
		t.Fatal(err)
	}
	defer stopJob(t, "survivor")
	a, err := cluster.WaitAlloc(within(t, 60*time.Second), "survivor", harness.TaskState("t", "running"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := cluster.PluginPIDs()
	if err != nil || len(before) == 0 {
		t.Fatalf("no caravan-driver plugin process found: %v", err)
	}
	for _, pid := range before {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	waitNewPlugin(t, before)
	signalUntilDead(t, a, "t", "SIGUSR1")
	a, err = cluster.WaitAlloc(within(t, 60*time.Second), "survivor", harness.TaskState("t", "dead"))
	if err != nil {
		t.Fatal(err)
	}
	events := harness.Events(a, "t")
	t.Logf("events:\n%s", events)
	out, _ := cluster.Logs(a, "t", "stdout")
	if !strings.Contains(out, "finishing") {
		t.Errorf("the task did not run to its end after the plugin was killed; stdout:\n%s", out)
	}
	if strings.Count(out, "started") != 1 {
		t.Errorf("the task was started more than once; stdout:\n%s", out)
	}
	if code := exitCode(a, "t"); code != 3 {
		t.Errorf("exit code reported as %d, want 3; events:\n%s", code, events)
	}
}

// signalUntilDead signals a task until it has exited: right after a plugin
// restart the client may not have re-attached to the task yet.
func signalUntilDead(t *testing.T, a *api.Allocation, task, sig string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		cur, _, err := cluster.API.Allocations().Info(a.ID, nil)
		if err == nil && cur.TaskStates[task] != nil && cur.TaskStates[task].State == "dead" {
			return
		}
		_ = cluster.API.Allocations().Signal(a, nil, task, sig)
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("task %s did not exit after %s", task, sig)
}

func waitNewPlugin(t *testing.T, old []int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		pids, _ := cluster.PluginPIDs()
		if len(pids) > 0 && pids[0] != old[0] {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("nomad did not relaunch the caravan-driver plugin")
}

func exitCode(a *api.Allocation, task string) int {
	code := -1
	for _, e := range a.TaskStates[task].Events {
		if e.Type == api.TaskTerminated {
			code = e.ExitCode
		}
	}
	return code
}

// (4) `nomad job stop` delivers SIGTERM; the training script checkpoints to
// CARAVAN_CHECKPOINT_DIR before it exits.
func TestStopCheckpoints(t *testing.T) {
	job, err := cluster.RunFile(repoPath(t, "jobspecs", "train-digits.nomad.hcl"), map[string]string{
		"workloads": harness.TaskWorkloads, "steps": "1000000", "step_sleep": "0.01",
	})
	if err != nil {
		t.Fatal(err)
	}
	id := *job.ID
	a, err := cluster.WaitAlloc(within(t, 60*time.Second), id, harness.TaskState("train", "running"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waitProgress(t, a, "train", 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cluster.API.Jobs().Deregister(id, false, nil); err != nil {
		t.Fatal(err)
	}
	defer stopJob(t, id)
	a, err = cluster.WaitAlloc(within(t, 60*time.Second), id, harness.TaskState("train", "dead"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cluster.Logs(a, "train", "stdout")
	t.Logf("stdout:\n%s", out)
	if got := envOf(out)["CARAVAN_CHECKPOINT_DIR"]; got != "/caravan/checkpoint" {
		t.Errorf("isolated task saw CARAVAN_CHECKPOINT_DIR %q, want /caravan/checkpoint", got)
	}
	if !strings.Contains(out, "received signal 15") || !strings.Contains(out, "checkpoint saved") {
		t.Errorf("task should report SIGTERM and a checkpoint; stdout:\n%s", out)
	}
	dir := hostCheckpointDir(t, id, "train", "train")
	st, err := os.Stat(filepath.Join(dir, "digits.pt"))
	if err != nil || st.Size() == 0 {
		t.Fatalf("no checkpoint in %s: %v", dir, err)
	}

	// Run the stopped job again: it resumes where the checkpoint left off.
	var step int
	if _, err := fmt.Sscanf(out[strings.LastIndex(out, "checkpoint saved at step"):], "checkpoint saved at step %d", &step); err != nil {
		t.Fatalf("no checkpoint step in stdout: %v", err)
	}
	if _, err := cluster.RunFile(repoPath(t, "jobspecs", "train-digits.nomad.hcl"), map[string]string{
		"workloads": harness.TaskWorkloads, "steps": fmt.Sprint(step + 20),
	}); err != nil {
		t.Fatal(err)
	}
	a, err = cluster.WaitAlloc(within(t, 90*time.Second), id, func(x *api.Allocation) bool {
		return x.ID != a.ID && harness.TaskState("train", "dead")(x)
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ = cluster.Logs(a, "train", "stdout")
	if want := fmt.Sprintf("resumed from checkpoint at step %d", step); !strings.Contains(out, want) {
		t.Errorf("second run should say %q; stdout:\n%s", want, out)
	}
}

// hostCheckpointDir is where the driver keeps a task's checkpoint on the
// single agent: <state_dir>/checkpoints/default/<job>/job-<create index>/...
func hostCheckpointDir(t *testing.T, jobID, group, task string) string {
	t.Helper()
	job, _, err := cluster.API.Jobs().Info(jobID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(cluster.Dir, cluster.Clients[0].Name, "caravan", "checkpoints", "default", jobID,
		fmt.Sprintf("job-%d", *job.CreateIndex), group, task)
}

type progressLine struct {
	Step    float64 `json:"step"`
	Loss    float64 `json:"loss"`
	Samples float64 `json:"samples"`
}

// waitProgress polls the task's progress file (through Nomad's fs API) until
// it holds at least n lines.
func waitProgress(t *testing.T, a *api.Allocation, task string, n int) ([]progressLine, error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var lines []progressLine
	var err error
	for time.Now().Before(deadline) {
		if lines, err = readProgress(a, task); err == nil && len(lines) >= n {
			return lines, nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return lines, fmt.Errorf("progress file has %d lines, want %d (last error %v)", len(lines), n, err)
}

func readProgress(a *api.Allocation, task string) ([]progressLine, error) {
	body, err := cluster.Cat(a, "alloc/caravan/"+task+".progress.jsonl")
	if err != nil {
		return nil, err
	}
	var lines []progressLine
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		if l == "" {
			continue
		}
		var p progressLine
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			return nil, fmt.Errorf("bad progress line %q: %w", l, err)
		}
		lines = append(lines, p)
	}
	return lines, nil
}

// (5) Real PyTorch training on CPU under the driver: its loss falls, as read
// from its progress file.
func TestPyTorchTrainingLossFalls(t *testing.T) {
	job, err := cluster.RunFile(repoPath(t, "jobspecs", "train-digits.nomad.hcl"), map[string]string{
		"workloads": harness.TaskWorkloads, "steps": "300",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stopJob(t, *job.ID)
	a, err := cluster.WaitAlloc(within(t, 180*time.Second), *job.ID, harness.TaskState("train", "dead"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cluster.Logs(a, "train", "stdout")
	if a.TaskStates["train"].Failed {
		errOut, _ := cluster.Logs(a, "train", "stderr")
		t.Fatalf("training failed:\n%s\n%s\n%s", harness.Events(a, "train"), out, errOut)
	}
	lines, err := readProgress(a, "train")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 10 {
		t.Fatalf("only %d progress lines", len(lines))
	}
	first, last := lines[0], lines[len(lines)-1]
	t.Logf("loss %.4f at step %g -> %.4f at step %g; %s", first.Loss, first.Step, last.Loss, last.Step, strings.TrimSpace(out[strings.LastIndex(out, "done"):]))
	if last.Step != 300 || !(last.Loss < first.Loss/2) {
		t.Errorf("loss should at least halve over 300 steps: first %+v last %+v", first, last)
	}
}

// Bad task config reaches the user as a task event naming the field, and the
// agent and its other tasks carry on.
func TestBadTaskConfigIsExplained(t *testing.T) {
	cases := []struct{ id, config, want string }{
		{"bad-fraction", `command = "/bin/true"
        gpu_fraction = 1.5`, "gpu_fraction"},
		{"bad-memory", `command = "/bin/true"
        gpu_fraction = 0.5
        gpu_memory = "lots"`, "gpu_memory"},
		{"bad-both", `command = "/bin/true"
        gpus = 1
        gpu_fraction = 0.5`, "gpu_fraction"},
		{"no-command", `args = ["x"]`, "command"},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			hcl := batchJob(c.id, "", c.config)
			if _, err := cluster.RunHCL(hcl, nil); err != nil {
				t.Fatal(err)
			}
			defer stopJob(t, c.id)
			a, err := cluster.WaitAlloc(within(t, 60*time.Second), c.id, func(a *api.Allocation) bool {
				ts := a.TaskStates["t"]
				return ts != nil && ts.Failed
			})
			if err != nil {
				t.Fatal(err)
			}
			events := harness.Events(a, "t")
			t.Logf("%s", events)
			if !strings.Contains(events, c.want) {
				t.Errorf("events should name %q:\n%s", c.want, events)
			}
		})
	}
}
