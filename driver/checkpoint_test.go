package driver

import (
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"
)

// ckptScript writes its own name into the checkpoint, reports what an
// earlier run left there, then exits with code (or waits, if code < 0, to
// be stopped as a preempted task is).
func ckptScript(code int) string {
	s := `echo "FOUND=$(cat /caravan/checkpoint/state 2>/dev/null || echo none)"; echo END_OF_ENV
echo written > /caravan/checkpoint/state
`
	if code < 0 {
		return s + "while true; do sleep 0.05; done"
	}
	return s + "exit " + strconv.Itoa(code)
}

// jobTask builds a task of job "train" (group workers, task w), as every
// allocation of one job's run is.
func (td *testDriver) jobTask(t *testing.T, script string) *drivers.TaskConfig {
	t.Helper()
	task := td.newTask(t, "w", script, TaskConfig{})
	task.JobID = "train"
	return task
}

func (td *testDriver) runToExit(t *testing.T, task *drivers.TaskConfig) (map[string]string, int) {
	t.Helper()
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	res := td.waitExit(t, task.ID)
	return stdoutEnv(t, task), res.ExitCode
}

func (td *testDriver) runAndStop(t *testing.T, task *drivers.TaskConfig) map[string]string {
	t.Helper()
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	env := stdoutEnv(t, task)
	deadline := time.Now().Add(10 * time.Second)
	for { // the checkpoint is written right after the env lines
		if _, err := os.Stat(filepath.Join(td.hostCheckpoint(task, td.run(t, task)), "state")); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := td.StopTask(task.ID, time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	return env
}

// run is the create index the driver keyed the task's checkpoint with.
func (td *testDriver) run(t *testing.T, task *drivers.TaskConfig) int {
	h, ok := td.impl.tasks.get(task.ID)
	if !ok {
		t.Fatalf("task %s not tracked", task.Name)
	}
	idx, _ := runIndex(filepath.Dir(filepath.Dir(h.checkpointDir)))
	return int(idx)
}

// Issue 9, item 3: a checkpoint belongs to one run of one job. A stopped
// (preempted) or crashed task resumes it; a completed run's re-run and a
// purged-and-recreated job start fresh.
func TestCheckpoint_BelongsToOneRun(t *testing.T) {
	var createIndex atomic.Uint64
	createIndex.Store(10)
	lookup := func(context.Context, string, string) (uint64, error) { return createIndex.Load(), nil }
	td := newTestDriver(t, simConfig(t.TempDir(), 1), WithJobRunLookup(lookup))

	if env := td.runAndStop(t, td.jobTask(t, ckptScript(-1))); env["FOUND"] != "none" {
		t.Fatalf("first run found %q", env["FOUND"])
	}
	if env := td.runAndStop(t, td.jobTask(t, ckptScript(-1))); env["FOUND"] != "written" {
		t.Fatalf("after preemption the task found %q, want its checkpoint", env["FOUND"])
	}
	if env, code := td.runToExit(t, td.jobTask(t, ckptScript(3))); env["FOUND"] != "written" || code != 3 {
		t.Fatalf("after a stop the task found %q (exit %d)", env["FOUND"], code)
	}
	if env, _ := td.runToExit(t, td.jobTask(t, ckptScript(0))); env["FOUND"] != "written" {
		t.Fatalf("after a crash the task found %q, want its checkpoint", env["FOUND"])
	}
	// That run completed (exit 0, nobody stopped it): a re-run is fresh.
	if env, _ := td.runToExit(t, td.jobTask(t, ckptScript(0))); env["FOUND"] != "none" {
		t.Fatalf("re-run after completion found %q, want a fresh checkpoint", env["FOUND"])
	}
	// The job is purged and registered again under the same name.
	createIndex.Store(42)
	if env := td.runAndStop(t, td.jobTask(t, ckptScript(-1))); env["FOUND"] != "none" {
		t.Fatalf("recreated job found %q, want a fresh checkpoint", env["FOUND"])
	}
	old := filepath.Join(td.impl.config.CheckpointRoot, "default", "train", "job-10")
	if _, err := os.Stat(old); err != nil {
		t.Fatalf("old run missing before GC: %v", err)
	}
	td.impl.gcCheckpoints(td.impl.config.CheckpointRoot, time.Hour, time.Now())
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("superseded run job-10 not collected: %v", err)
	}
	current := filepath.Join(td.impl.config.CheckpointRoot, "default", "train", "job-42", "workers", "w", "state")
	if _, err := os.Stat(current); err != nil {
		t.Errorf("current run's checkpoint collected: %v", err)
	}
	// Idle past the retention, and no task running: collected.
	td.impl.gcCheckpoints(td.impl.config.CheckpointRoot, time.Hour, time.Now().Add(2*time.Hour))
	if _, err := os.Stat(filepath.Join(td.impl.config.CheckpointRoot, "default")); !os.IsNotExist(err) {
		t.Errorf("idle checkpoints not collected: %v", err)
	}
}

// A checkpoint dir is the task user's alone (0700) and its parents do not
// list other jobs (0711).
func TestCheckpoint_PrivateToTaskUser(t *testing.T) {
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	task := td.jobTask(t, "echo END_OF_ENV")
	if _, code := td.runToExit(t, task); code != 0 {
		t.Fatalf("exit %d", code)
	}
	dir := td.hostCheckpoint(task, 1)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm() != 0o700 || strconv.Itoa(int(st.Uid)) != nobody.Uid {
		t.Errorf("checkpoint dir mode %v uid %d, want 0700 owned by nobody (%s)", fi.Mode().Perm(), st.Uid, nobody.Uid)
	}
	parent, _ := os.Stat(filepath.Dir(dir))
	if parent.Mode().Perm() != 0o711 {
		t.Errorf("parent mode %v, want 0711", parent.Mode().Perm())
	}
}

// When Nomad cannot be asked which run this is, the checkpoint is the
// allocation's alone: never another job's.
func TestCheckpoint_UnknownRunIsPerAllocation(t *testing.T) {
	fail := func(context.Context, string, string) (uint64, error) { return 0, errors.New("connection refused") }
	td := newTestDriver(t, simConfig(t.TempDir(), 1), WithJobRunLookup(fail))
	task := td.jobTask(t, "true")
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	h, _ := td.impl.tasks.get(task.ID)
	want := filepath.Join(td.impl.config.CheckpointRoot, "default", "train", "alloc-"+task.AllocID, "workers", "w")
	if h.checkpointDir != want {
		t.Errorf("checkpoint %s, want %s", h.checkpointDir, want)
	}
	td.waitExit(t, task.ID)
}
