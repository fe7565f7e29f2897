package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/client/lib/cgroupslib"
	"github.com/hashicorp/nomad/client/lib/numalib"
	"github.com/hashicorp/nomad/helper/uuid"
	nstructs "github.com/hashicorp/nomad/nomad/structs"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
	dtestutil "github.com/hashicorp/nomad/plugins/drivers/testutils"
	"golang.org/x/sys/unix"
)

var topology = numalib.Scan(numalib.PlatformScanners(false))

// simConfig is a plugin config with count simulated 80 GiB GPUs.
func simConfig(stateDir string, count int64) Config {
	return Config{
		GPUBackend:    "simulated",
		SimulatedGPUs: &SimulatedGPU{Model: "Test GPU", MemoryMiB: 81920, Count: count},
		StateDir:      stateDir,
	}
}

type testDriver struct {
	*dtestutil.DriverHarness
	impl *Driver
}

// newTestDriver starts a driver behind Nomad's gRPC driver harness and
// configures it through SetConfig, as the agent would.
func newTestDriver(t *testing.T, conf Config, opts ...Option) *testDriver {
	t.Helper()
	// Every test job is run 1 of its job unless the test says otherwise:
	// no test asks a real Nomad.
	opts = append([]Option{WithJobRunLookup(fixedJobRun(1))}, opts...)
	d := New(hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Warn}), opts...).(*Driver)
	h := dtestutil.NewDriverHarness(t, d)
	var data []byte
	if err := base.MsgPackEncode(&data, &conf); err != nil {
		t.Fatal(err)
	}
	err := h.SetConfig(&base.Config{
		PluginConfig: data,
		AgentConfig:  &base.AgentConfig{Driver: &base.ClientDriverConfig{Topology: topology}},
	})
	if err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	t.Cleanup(func() {
		d.cancel()
		h.Kill()
	})
	return &testDriver{DriverHarness: h, impl: d}
}

// newTask builds a task running /bin/sh -c script with logs captured.
func (td *testDriver) newTask(t *testing.T, name, script string, tc TaskConfig) *drivers.TaskConfig {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("launching through Nomad's executor needs root to manage the task's cgroups")
	}
	task := td.buildTask(t, name, script, tc, true)
	// As the client does after every task: without it the executor process
	// outlives the test. It calls the driver itself, not through the
	// harness: the harness' alloc-dir cleanups close its gRPC connection,
	// and a later task's runs first.
	t.Cleanup(func() {
		if err := td.impl.DestroyTask(task.ID, true); err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Errorf("destroy task %s: %v", task.Name, err)
		}
	})
	return task
}

// newRejectedTask builds a task expected to fail StartTask: without log
// capture, whose teardown waits seconds for a writer that never came.
func (td *testDriver) newRejectedTask(t *testing.T, name string, tc TaskConfig) *drivers.TaskConfig {
	t.Helper()
	return td.buildTask(t, name, "true", tc, false)
}

func (td *testDriver) buildTask(t *testing.T, name, script string, tc TaskConfig, logs bool) *drivers.TaskConfig {
	t.Helper()
	allocID := uuid.Generate()
	task := &drivers.TaskConfig{
		ID:            uuid.Generate(),
		AllocID:       allocID,
		Name:          name,
		JobID:         "train-" + name,
		TaskGroupName: "workers",
		Namespace:     "default",
		Resources:     testResources(allocID, name),
	}
	tc.Command = "/bin/sh"
	tc.Args = []string{"-c", script}
	if err := task.EncodeConcreteDriverConfig(&tc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(td.MkAllocDir(task, logs))
	if logs { // only launched tasks need the cgroup the client would make
		td.MakeTaskCgroup(allocID, name)
	}
	return task
}

func testResources(allocID, task string) *drivers.Resources {
	return &drivers.Resources{
		NomadResources: &nstructs.AllocatedTaskResources{
			Memory: nstructs.AllocatedMemoryResources{MemoryMB: 128},
			Cpu:    nstructs.AllocatedCpuResources{CpuShares: 100},
		},
		LinuxResources: &drivers.LinuxResources{
			MemoryLimitBytes: 128 << 20,
			CPUShares:        100,
			CpusetCgroupPath: cgroupslib.LinuxResourcesPath(allocID, task, false),
		},
	}
}

// waitExit waits for the task's exit result.
func (td *testDriver) waitExit(t *testing.T, id string) *drivers.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := td.WaitTask(ctx, id)
	if err != nil {
		t.Fatalf("WaitTask: %v", err)
	}
	res, ok := <-ch
	if !ok {
		t.Fatal("task did not exit in time")
	}
	return res
}

// stdoutEnv reads KEY=VALUE lines the task printed with env.
func stdoutEnv(t *testing.T, task *drivers.TaskConfig) map[string]string {
	t.Helper()
	path := filepath.Join(task.TaskDir().LogDir, task.Name+".stdout.0")
	var out []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ = os.ReadFile(path)
		if strings.Contains(string(out), "END_OF_ENV") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

// fingerprint reads one fingerprint from the driver.
func (td *testDriver) fingerprint(t *testing.T) *drivers.Fingerprint {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := td.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case fp := <-ch:
		return fp
	case <-time.After(10 * time.Second):
		t.Fatal("no fingerprint")
		return nil
	}
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

// fixedJobRun is a JobRunLookup that always answers idx.
func fixedJobRun(idx uint64) JobRunLookup {
	return func(context.Context, string, string) (uint64, error) { return idx, nil }
}

// hostCheckpoint is a task's checkpoint dir on the host, in run job-<idx>.
func (td *testDriver) hostCheckpoint(task *drivers.TaskConfig, idx int) string {
	return filepath.Join(td.impl.config.CheckpointRoot, "default", task.JobID, fmt.Sprintf("job-%d", idx), task.TaskGroupName, task.Name)
}

// fakeDevDir makes stand-ins for /dev/nvidia<minor> (char 195:minor),
// /dev/nvidiactl (195:255) and /dev/nvidia-uvm (235:0). Without the NVIDIA
// kernel module an open that the device cgroup allows fails with ENXIO
// ("No such device or address"), one it refuses with EPERM.
func fakeDevDir(t *testing.T, minors ...int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making device nodes needs root")
	}
	dir := t.TempDir()
	nodes := map[string]int{"nvidiactl": int(unix.Mkdev(195, 255)), "nvidia-uvm": int(unix.Mkdev(235, 0))}
	for _, m := range minors {
		nodes[gpuNode(m)] = int(unix.Mkdev(195, uint32(m)))
	}
	for name, dev := range nodes {
		if err := unix.Mknod(filepath.Join(dir, name), unix.S_IFCHR|0o666, dev); err != nil {
			t.Skipf("cannot mknod device stand-ins here: %v", err)
		}
		_ = os.Chmod(filepath.Join(dir, name), 0o666)
	}
	return dir
}

// writeFile creates an empty file, e.g. a release signal in /alloc.
func writeFile(path string) error { return os.WriteFile(path, nil, 0o644) }
