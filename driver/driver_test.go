package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/driver/gpu"
	"github.com/hashicorp/nomad/plugins/drivers"
)

func TestStartTask_FractionEnvAndExitCode(t *testing.T) {
	state := t.TempDir()
	td := newTestDriver(t, simConfig(state, 2))
	task := td.newTask(t, "trainer", "env; echo END_OF_ENV; exit 3",
		TaskConfig{GPUFraction: "0.5", GPUMemory: "8GiB"})

	if _, _, err := td.StartTask(task); err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	res := td.waitExit(t, task.ID)
	if res.ExitCode != 3 || res.Err != nil {
		t.Fatalf("exit %+v, want code 3", res)
	}
	env := stdoutEnv(t, task)
	uuid := env["CUDA_VISIBLE_DEVICES"]
	if !gpu.IsSimulatedUUID(uuid) {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q, want a simulated GPU UUID", uuid)
	}
	want := map[string]string{
		"CARAVAN_GPU_BACKEND":    "simulated",
		"CARAVAN_GPU_FRACTION":   "0.5",
		"CARAVAN_GPU_UUIDS":      uuid,
		"CARAVAN_GPU_MEMORY_MIB": "8192",
		"CARAVAN_CHECKPOINT_DIR": "/caravan/checkpoint",
		"CARAVAN_PROGRESS_FILE":  "/alloc/caravan/trainer.progress.jsonl",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	hostCkpt := td.hostCheckpoint(task, 1)
	if !strings.HasPrefix(hostCkpt, filepath.Join(state, "checkpoints")) {
		t.Errorf("checkpoint %s not under the state dir's checkpoints", hostCkpt)
	}
	for _, p := range []string{hostCkpt, filepath.Join(task.AllocDir, "alloc", "caravan", "trainer.progress.jsonl")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("task path missing: %v", err)
		}
	}
	if free := freeFraction(t, td, 0) + freeFraction(t, td, 1); free != 2 {
		t.Errorf("after exit the grant must be released, free fractions sum to %v", free)
	}
	if err := td.DestroyTask(task.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hostCkpt); err != nil {
		t.Errorf("checkpoint dir must outlive the task: %v", err)
	}
}

func TestStartTask_NoGPUHidesDevices(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	task := td.newTask(t, "cpu", "env; echo END_OF_ENV", TaskConfig{})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	td.waitExit(t, task.ID)
	env := stdoutEnv(t, task)
	if v, ok := env["CUDA_VISIBLE_DEVICES"]; !ok || v != "" {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q (set %v), want empty", v, ok)
	}
	if env["CARAVAN_GPU_FRACTION"] != "0" || env["CARAVAN_GPU_COUNT"] != "0" {
		t.Errorf("GPU env for a CPU task: %v %v", env["CARAVAN_GPU_FRACTION"], env["CARAVAN_GPU_COUNT"])
	}
}

func TestStartTask_WholeGPUs(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 2))
	task := td.newTask(t, "whole", "env; echo END_OF_ENV", TaskConfig{GPUs: "2"})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	td.waitExit(t, task.ID)
	env := stdoutEnv(t, task)
	devs := strings.Split(env["CUDA_VISIBLE_DEVICES"], ",")
	if len(devs) != 2 || env["CARAVAN_GPU_COUNT"] != "2" || env["CARAVAN_GPU_FRACTION"] != "1" {
		t.Errorf("whole-GPU env: CUDA_VISIBLE_DEVICES=%q count=%q fraction=%q",
			env["CUDA_VISIBLE_DEVICES"], env["CARAVAN_GPU_COUNT"], env["CARAVAN_GPU_FRACTION"])
	}
}

func TestStartTask_SharingAndNoFit(t *testing.T) {
	state := t.TempDir()
	td := newTestDriver(t, simConfig(state, 1))
	sleep := "sleep 60"
	a := td.newTask(t, "a", sleep, TaskConfig{GPUFraction: "0.5"})
	b := td.newTask(t, "b", sleep, TaskConfig{GPUFraction: "0.5"})
	c := td.newTask(t, "c", sleep, TaskConfig{GPUFraction: "0.6"})
	for _, task := range []*drivers.TaskConfig{a, b} {
		if _, _, err := td.StartTask(task); err != nil {
			t.Fatalf("StartTask %s: %v", task.Name, err)
		}
	}
	if f := freeFraction(t, td, 0); f != 0 {
		t.Errorf("two halves must fill the GPU, free = %v", f)
	}
	_, _, err := td.StartTask(c)
	if err == nil || !strings.Contains(err.Error(), "gpu_fraction") || !strings.Contains(err.Error(), "fit") {
		t.Fatalf("third task: got %v, want a clear does-not-fit error", err)
	}
	if _, err := os.Stat(filepath.Join(state, "checkpoints", "default", "train-c")); !os.IsNotExist(err) {
		t.Errorf("a task that does not fit must touch nothing, checkpoint dir stat: %v", err)
	}
	if _, err := td.InspectTask(c.ID); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("failed task must not be tracked: %v", err)
	}

	// Stopping one half frees room for the 0.6 task? No: 0.5 free < 0.6.
	// Stopping both does.
	for _, task := range []*drivers.TaskConfig{a, b} {
		if err := td.StopTask(task.ID, time.Second, "SIGTERM"); err != nil {
			t.Fatal(err)
		}
		if err := td.DestroyTask(task.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := td.StartTask(c); err != nil {
		t.Fatalf("0.6 must fit on the freed GPU: %v", err)
	}
	if err := td.DestroyTask(c.ID, true); err != nil {
		t.Fatal(err)
	}
	if f := freeFraction(t, td, 0); f != 1 {
		t.Errorf("DestroyTask must free the grant, free = %v", f)
	}
}

func TestStopTask_SignalLetsTaskCheckpoint(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	script := `trap 'echo checkpointed > "$CARAVAN_CHECKPOINT_DIR/ckpt"; exit 7' TERM
while true; do sleep 0.1; done`
	task := td.newTask(t, "stopper", script, TaskConfig{GPUFraction: "0.3"})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	if err := td.WaitUntilStarted(task.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let the shell install its trap
	if err := td.StopTask(task.ID, 10*time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	res := td.waitExit(t, task.ID)
	if res.ExitCode != 7 {
		t.Fatalf("exit %+v, want 7 from the TERM trap", res)
	}
	status, err := td.InspectTask(task.ID)
	if err != nil || status.State != drivers.TaskStateExited {
		t.Fatalf("status %+v err %v", status, err)
	}
	ckpt := filepath.Join(td.hostCheckpoint(task, 1), "ckpt")
	if data, err := os.ReadFile(ckpt); err != nil || strings.TrimSpace(string(data)) != "checkpointed" {
		t.Fatalf("checkpoint written on stop: %q %v", data, err)
	}
}

func TestSignalAndExec(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	task := td.newTask(t, "sig", `trap 'exit 9' USR1; while true; do sleep 0.1; done`, TaskConfig{})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	res, err := td.ExecTask(task.ID, []string{"/bin/sh", "-c", "echo $CARAVAN_GPU_BACKEND"}, 5*time.Second)
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "simulated" || res.ExitResult.ExitCode != 0 {
		t.Fatalf("exec: %+v %v", res, err)
	}
	if _, err := td.ExecTask(task.ID, nil, time.Second); err == nil {
		t.Error("empty exec command accepted")
	}
	if err := td.SignalTask(task.ID, "SIGBOGUS"); err == nil || !strings.Contains(err.Error(), "SIGBOGUS") {
		t.Errorf("unknown signal: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := td.SignalTask(task.ID, "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	if res := td.waitExit(t, task.ID); res.ExitCode != 9 {
		t.Fatalf("exit %+v, want 9", res)
	}
}

func TestStartTask_BadConfigNamesField(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	cases := map[string]TaskConfig{
		"gpu_fraction":  {GPUFraction: "1.5"},
		"gpu_memory":    {GPUFraction: "0.5", GPUMemory: "lots"},
		"gpu_uuids":     {GPUFraction: "0.5", GPUUUIDs: []string{"GPU-not-here"}},
		"remote_memory": {RemoteMemory: "8GiB"},
		"gpus":          {GPUs: "3"},
	}
	for field, tc := range cases {
		task := td.newRejectedTask(t, "bad", tc)
		_, _, err := td.StartTask(task)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: got %v, want an error naming the field", field, err)
		}
	}
	if f := freeFraction(t, td, 0); f != 1 {
		t.Errorf("failed starts must hold nothing, free = %v", f)
	}
}

func TestTaskStats_IncludesGPU(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	task := td.newTask(t, "stats", "sleep 30", TaskConfig{GPUFraction: "0.25"})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	defer td.DestroyTask(task.ID, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Through the Go API: Nomad's driver RPC drops device stats.
	ch, err := td.impl.TaskStats(ctx, task.ID, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	usage := <-ch
	if usage == nil || len(usage.ResourceUsage.DeviceStats) != 1 {
		t.Fatalf("usage %+v", usage)
	}
	uuid := td.impl.node.devices[0].UUID
	inst := usage.ResourceUsage.DeviceStats[0].InstanceStats[uuid]
	if inst == nil || *inst.Stats.Attributes["granted_fraction"].FloatNumeratorVal != 0.25 {
		t.Fatalf("GPU stats for %s: %+v", uuid, usage.ResourceUsage.DeviceStats[0])
	}
	if inst.Stats.Attributes["memory_used"].IntDenominatorVal == nil ||
		*inst.Stats.Attributes["memory_used"].IntDenominatorVal != 81920 {
		t.Errorf("memory total not reported")
	}
}
