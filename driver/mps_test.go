package driver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

// recordingRunner stands in for nvidia-cuda-mps-control and records calls.
type recordingRunner struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingRunner) Run(_ context.Context, env []string, stdin, name string, args ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	gpu := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "CUDA_VISIBLE_DEVICES="); ok {
			gpu = v
		}
	}
	r.calls = append(r.calls, strings.TrimSpace(strings.Join(append(args, stdin), " "))+" "+gpu)
	return nil
}

func (r *recordingRunner) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// On an NVML node with MPS, a fractional task talks to its GPU's MPS
// daemon, started for the first task and stopped after the last.
func TestStartTask_MPSOnNVMLNode(t *testing.T) {
	state := t.TempDir()
	runner := &recordingRunner{}
	conf := Config{GPUBackend: "nvml", MPS: ptr(true), MPSBinary: "/bin/true", StateDir: state}
	conf.DeviceDir = fakeDevDir(t, 3)
	td := newTestDriver(t, conf, WithNVML(dgxh100.New()), WithMPSRunner(runner))
	uuid := td.impl.node.devices[3].UUID

	task := td.newTask(t, "mps", "env; echo END_OF_ENV",
		TaskConfig{GPUFraction: "0.25", GPUMemory: "20GiB", GPUUUIDs: []string{uuid}})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	if res := td.waitExit(t, task.ID); res.ExitCode != 0 {
		t.Fatalf("exit %+v", res)
	}
	env := stdoutEnv(t, task)
	want := map[string]string{
		"CUDA_VISIBLE_DEVICES":              uuid,
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25",
		"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT":  "0=20480M",
		"CUDA_MPS_PIPE_DIRECTORY":           "/caravan/mps", // the GPU's pipe dir, bound in
		"CARAVAN_GPU_BACKEND":               "nvml",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	// DestroyTask after the exit must not release a second time.
	if err := td.DestroyTask(task.ID, true); err != nil {
		t.Fatal(err)
	}
	calls := runner.snapshot()
	if !slices.Equal(calls, []string{"-d " + uuid, "quit " + uuid}) {
		t.Fatalf("MPS control calls %q, want one start and one quit", calls)
	}
}

// GPUs reserved through Nomad's nvidia device plugin are honoured and
// kept away from fractional tasks.
func TestStartTask_NvidiaDevicePluginGPUs(t *testing.T) {
	conf := Config{GPUBackend: "nvml", MPS: ptr(false), StateDir: t.TempDir()}
	conf.DeviceDir = fakeDevDir(t, 0)
	td := newTestDriver(t, conf, WithNVML(dgxh100.New()))
	uuid := td.impl.node.devices[0].UUID

	// The task holds its GPU until the pinned fraction has been refused:
	// its grant is freed as soon as it exits. It waits for a file in its
	// shared alloc dir, the one host dir it sees.
	task := td.newTask(t, "dev", "env; echo END_OF_ENV; while [ ! -e /alloc/release ]; do sleep 0.05; done", TaskConfig{})
	release := filepath.Join(task.AllocDir, "alloc", "release")
	task.DeviceEnv = map[string]string{nvidiaVisibleDevices: uuid}
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	if f := freeFraction(t, td, 0); f != 0 {
		t.Errorf("device-plugin GPU must be reserved in the ledger, free = %v", f)
	}
	pinned := td.newRejectedTask(t, "pinned", TaskConfig{GPUFraction: "0.1", GPUUUIDs: []string{uuid}})
	if _, _, err := td.StartTask(pinned); err == nil {
		t.Error("a fraction on a device-plugin GPU was admitted")
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	td.waitExit(t, task.ID)
	if got := stdoutEnv(t, task)["CUDA_VISIBLE_DEVICES"]; got != uuid {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q, want %q", got, uuid)
	}

	both := td.newRejectedTask(t, "both", TaskConfig{GPUFraction: "0.5"})
	both.DeviceEnv = map[string]string{nvidiaVisibleDevices: uuid}
	_, _, err := td.StartTask(both)
	if err == nil || !strings.Contains(err.Error(), "nvidia device plugin") {
		t.Fatalf("device GPUs plus gpu_fraction: got %v", err)
	}
}
