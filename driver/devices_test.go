package driver

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/caravan-dl/caravan/driver/gpu"
	"github.com/hashicorp/nomad/client/lib/cgroupslib"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// NVML's minor numbers, not the enumeration order, name the device nodes.
func TestNVMLInventory_MinorNumbers(t *testing.T) {
	lib := dgxh100.New()
	for i, d := range lib.Devices {
		d.(*server.Device).Minor = 7 - i // reversed, as a real board can be
	}
	devs, err := gpu.NewNVML(lib).Devices()
	if err != nil || len(devs) != 8 {
		t.Fatalf("devices %v err %v", devs, err)
	}
	for i, d := range devs {
		if d.Minor != 7-i {
			t.Errorf("GPU %d (%s): minor %d, want %d", i, d.UUID, d.Minor, 7-i)
		}
	}
	// A device whose minor number NVML cannot give cannot be isolated.
	lib.Devices[2].(*server.Device).GetMinorNumberFunc = nil
	devs, _ = gpu.NewNVML(lib).Devices()
	if devs[2].Minor != -1 {
		t.Fatalf("minor without GetMinorNumber = %d, want -1", devs[2].Minor)
	}
	if _, err := gpuDeviceConfigs(t.TempDir(), gpu.BackendNVML, devs[2:3]); err == nil {
		t.Fatal("a GPU without a minor number was given to an isolated task")
	}
}

func TestGPUDeviceConfigs_OnlyGrantedNodes(t *testing.T) {
	dir := fakeDevDir(t, 0, 1, 5)
	devs := []gpu.Device{{UUID: "GPU-b", Minor: 5}}
	got, err := gpuDeviceConfigs(dir, gpu.BackendNVML, devs)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range got {
		paths = append(paths, d.TaskPath)
		if d.Permissions != "rw" || d.HostPath != filepath.Join(dir, filepath.Base(d.TaskPath)) {
			t.Errorf("device %+v", d)
		}
	}
	slices.Sort(paths)
	if want := []string{"/dev/nvidia-uvm", "/dev/nvidia5", "/dev/nvidiactl"}; !slices.Equal(paths, want) {
		t.Errorf("nodes %v, want %v", paths, want)
	}
	if none, _ := gpuDeviceConfigs(dir, gpu.BackendNVML, nil); len(none) != 0 {
		t.Errorf("a task without GPUs gets %v", none)
	}
	if _, err := gpuDeviceConfigs(dir, gpu.BackendNVML, []gpu.Device{{UUID: "GPU-x", Minor: 3}}); err == nil {
		t.Error("a real GPU without its node was accepted")
	}
	if sim, err := gpuDeviceConfigs(dir, gpu.BackendSimulated, []gpu.Device{{UUID: "GPU-x", Minor: 3}}); err != nil || len(sim) != 2 {
		t.Errorf("simulated GPU without a stand-in: %v %v, want the control nodes only", sim, err)
	}
}

// probeNodes lists /dev/nvidia* and how opening each ends: "ok", or the
// shell's error ("No such device or address" means the kernel let the
// open through to the absent driver).
const probeNodes = `for f in /dev/nvidia*; do [ -e "$f" ] || continue
  if err=$( (: <"$f") 2>&1); then r=ok; else r=${err##*: }; fi
  echo "NODE_$(basename "$f" | tr - _)=$r"
done; echo END_OF_ENV`

// A task sees, and may open, only its own GPU's node and the control
// nodes; a fractional task its one GPU; a task without GPUs none. The
// device cgroup (checked on cgroups v1, where it is a file) allows
// exactly those.
func TestIsolation_GPUDeviceNodes(t *testing.T) {
	conf := simConfig(t.TempDir(), 4)
	conf.DeviceDir = fakeDevDir(t, 0, 1, 2, 3)
	td := newTestDriver(t, conf)
	uuid := func(i int) string { return td.impl.node.devices[i].UUID }
	enxio := "No such device or address"

	whole := td.newTask(t, "whole", probeNodes+"; sleep 30", TaskConfig{GPUs: "1", GPUUUIDs: []string{uuid(1)}})
	if _, _, err := td.StartTask(whole); err != nil {
		t.Fatal(err)
	}
	env := waitEnv(t, whole)
	want := map[string]string{"NODE_nvidia1": enxio, "NODE_nvidiactl": enxio, "NODE_nvidia_uvm": enxio}
	assertNodes(t, "gpus=1 on GPU 1", env, want)
	checkDeviceCgroup(t, td, whole, "c 195:1 rw", "c 195:0 ")
	if err := td.StopTask(whole.ID, time.Second, "SIGKILL"); err != nil {
		t.Fatal(err)
	}

	frac := td.newTask(t, "frac", probeNodes, TaskConfig{GPUFraction: "0.5", GPUUUIDs: []string{uuid(2)}})
	assertNodes(t, "gpu_fraction on GPU 2", td.runAndRead(t, frac),
		map[string]string{"NODE_nvidia2": enxio, "NODE_nvidiactl": enxio, "NODE_nvidia_uvm": enxio})

	cpu := td.newTask(t, "cpu", probeNodes, TaskConfig{})
	assertNodes(t, "no GPUs", td.runAndRead(t, cpu), map[string]string{})
}

func assertNodes(t *testing.T, what string, env, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for k, v := range env {
		if strings.HasPrefix(k, "NODE_") {
			got[k] = v
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: task sees nodes %v, want %v", what, got, want)
	}
}

// waitEnv reads the KEY=VALUE lines of a task that keeps running.
func waitEnv(t *testing.T, task *drivers.TaskConfig) map[string]string {
	t.Helper()
	return stdoutEnv(t, task) // polls until END_OF_ENV
}

// checkDeviceCgroup reads the running task's devices.list (cgroups v1).
func checkDeviceCgroup(t *testing.T, td *testDriver, task *drivers.TaskConfig, allowed, denied string) {
	t.Helper()
	if cgroupslib.GetMode() != cgroupslib.CG1 {
		t.Log("cgroups v2 enforces device rules with eBPF; the in-task probe above is the check")
		return
	}
	h, _ := td.impl.tasks.get(task.ID)
	path := devicesCgroupOf(t, h.pid)
	data, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/devices", path, "devices.list"))
	if err != nil {
		t.Fatalf("reading the task's device cgroup: %v", err)
	}
	list := string(data)
	t.Logf("device cgroup %s:\n%s", path, list)
	if !strings.Contains(list, allowed) || strings.Contains(list, denied) || strings.Contains(list, "a *:* rwm") {
		t.Errorf("device cgroup %s allows:\n%s\nwant %q and not %q", path, list, allowed, denied)
	}
}

func devicesCgroupOf(t *testing.T, pid int) string {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "devices") {
			return parts[2]
		}
	}
	t.Fatalf("task %d has no devices cgroup", pid)
	return ""
}
