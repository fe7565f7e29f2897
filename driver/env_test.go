package driver

import (
	"slices"
	"strings"
	"testing"
)

// Issue 9, item 4: a task with no GPU ask set NVIDIA_VISIBLE_DEVICES=all
// and CUDA_VISIBLE_DEVICES=<uuid> in its job env and ran with that GPU
// visible and CARAVAN_GPU_COUNT=0. Only Nomad's device reservation
// (DeviceEnv) may name GPUs; the driver has the last word on the CUDA and
// MPS variables.
func TestStartTask_JobEnvCannotChooseGPUs(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 2))
	uuid := td.impl.node.devices[0].UUID
	task := td.newTask(t, "sneaky", "env; echo END_OF_ENV", TaskConfig{})
	task.Env = map[string]string{
		"NVIDIA_VISIBLE_DEVICES":            "all",
		"CUDA_VISIBLE_DEVICES":              uuid,
		"CUDA_MPS_PIPE_DIRECTORY":           "/var/lib/caravan/mps/" + uuid + "/pipe",
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "100",
		"KEEP_ME":                           "yes",
	}
	env := td.runAndRead(t, task)
	if v, ok := env["CUDA_VISIBLE_DEVICES"]; !ok || v != "" {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q (set %v), want empty", v, ok)
	}
	for _, k := range []string{"NVIDIA_VISIBLE_DEVICES", "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"} {
		if v, ok := env[k]; ok {
			t.Errorf("%s = %q reached the task", k, v)
		}
	}
	if env["CARAVAN_GPU_COUNT"] != "0" || env["KEEP_ME"] != "yes" {
		t.Errorf("CARAVAN_GPU_COUNT = %q KEEP_ME = %q", env["CARAVAN_GPU_COUNT"], env["KEEP_ME"])
	}
}

// A device reservation of "all" is checked against the ledger like a
// list: every GPU is granted whole, or the task is refused.
func TestStartTask_DeviceAllIsChecked(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 2))
	holder := td.newTask(t, "holder", "while [ ! -e /alloc/release ]; do sleep 0.05; done", TaskConfig{GPUFraction: "0.5"})
	if _, _, err := td.StartTask(holder); err != nil {
		t.Fatal(err)
	}
	all := td.newRejectedTask(t, "all", TaskConfig{})
	all.DeviceEnv = map[string]string{nvidiaVisibleDevices: "all"}
	if _, _, err := td.StartTask(all); err == nil || !strings.Contains(err.Error(), "already shared") {
		t.Fatalf(`"all" while a GPU is shared: got %v, want a ledger refusal`, err)
	}
	if err := writeFile(holder.AllocDir + "/alloc/release"); err != nil {
		t.Fatal(err)
	}
	td.waitExit(t, holder.ID)

	whole := td.newTask(t, "whole", "env; echo END_OF_ENV", TaskConfig{})
	whole.DeviceEnv = map[string]string{nvidiaVisibleDevices: "all"}
	env := td.runAndRead(t, whole)
	got := strings.Split(env["CUDA_VISIBLE_DEVICES"], ",")
	want := []string{td.impl.node.devices[0].UUID, td.impl.node.devices[1].UUID}
	if !slices.Equal(got, want) || env["CARAVAN_GPU_COUNT"] != "2" {
		t.Errorf(`"all": CUDA_VISIBLE_DEVICES = %v, count %s; want %v, 2`, got, env["CARAVAN_GPU_COUNT"], want)
	}
}

func TestEnvList_DriverHasTheLastWord(t *testing.T) {
	got := envList(map[string]string{
		"CUDA_VISIBLE_DEVICES": "GPU-x", "NVIDIA_VISIBLE_DEVICES": "all", "CUDA_MPS_LOG_DIRECTORY": "/x", "A": "1",
	}, map[string]string{"CUDA_VISIBLE_DEVICES": ""})
	want := []string{"A=1", "CUDA_VISIBLE_DEVICES=", "PATH=" + defaultPath}
	if !slices.Equal(got, want) {
		t.Fatalf("envList = %v, want %v", got, want)
	}
}
