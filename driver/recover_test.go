package driver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"
)

// A new driver instance on the same state dir (a restarted plugin) takes
// over a running task: it keeps running, its grant stays taken, and its
// exit is reported and frees the grant.
func TestRecoverTask_AfterPluginRestart(t *testing.T) {
	state := t.TempDir()
	conf := simConfig(state, 1)
	first := newTestDriver(t, conf)
	task := first.newTask(t, "long", `while [ ! -f "$NOMAD_TASK_DIR/go" ]; do sleep 0.1; done; exit 5`,
		TaskConfig{GPUFraction: "0.7"})
	handle, _, err := first.StartTask(task)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.WaitUntilStarted(task.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	first.impl.cancel() // the old plugin process is gone

	second := newTestDriver(t, conf)
	if f := freeFraction(t, second, 0); f != 0.3 {
		t.Fatalf("restarted driver must still count the grant, free = %v", f)
	}
	if err := second.RecoverTask(handle); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	status, err := second.InspectTask(task.ID)
	if err != nil || status.State != drivers.TaskStateRunning {
		t.Fatalf("recovered task status %+v %v", status, err)
	}
	if err := os.WriteFile(filepath.Join(task.TaskDir().LocalDir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := second.waitExit(t, task.ID); res.ExitCode != 5 {
		t.Fatalf("recovered task exit %+v, want 5", res)
	}
	if f := freeFraction(t, second, 0); f != 1 {
		t.Errorf("exit of a recovered task must free its grant, free = %v", f)
	}
	if err := second.DestroyTask(task.ID, true); err != nil {
		t.Fatal(err)
	}
}

func TestRecoverTask_DeadExecutorFails(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	task := td.newRejectedTask(t, "gone", TaskConfig{})
	handle := drivers.NewTaskHandle(taskHandleVersion)
	handle.Config = task
	if err := handle.SetDriverState(&taskState{TaskConfig: task}); err != nil {
		t.Fatal(err)
	}
	if err := td.RecoverTask(handle); err == nil {
		t.Fatal("recovering a task without an executor must fail")
	}
	if err := td.impl.RecoverTask(nil); err == nil {
		t.Fatal("nil handle accepted")
	}
}
