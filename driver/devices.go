package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/caravan-dl/caravan/driver/gpu"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// controlNodes are the NVIDIA nodes a CUDA process opens besides its
// GPUs' own: the control device and the unified-memory devices.
var controlNodes = []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"}

// gpuNode is the node name of a GPU with the given minor number.
func gpuNode(minor int) string { return "nvidia" + strconv.Itoa(minor) }

// gpuDeviceConfigs lists the device nodes an isolated task with these GPUs
// gets: /dev/nvidia<minor> of each, plus the control nodes present, all
// taken from devDir on the host. The executor creates exactly these in
// the task's /dev and allows exactly these in its device cgroup, so a
// task cannot open another GPU whatever its environment says. A task
// without GPUs gets no NVIDIA node at all.
//
// Simulated GPUs have nodes only where a test made stand-ins; a missing
// one is skipped. A real GPU's missing node is an error: the task could
// not use the GPU it was granted.
func gpuDeviceConfigs(devDir, backend string, devs []gpu.Device) ([]*drivers.DeviceConfig, error) {
	if len(devs) == 0 {
		return nil, nil
	}
	var out []*drivers.DeviceConfig
	for _, dev := range devs {
		if dev.Minor < 0 {
			return nil, fmt.Errorf("GPU %s: NVML reports no device minor number, so its node cannot be given to an isolated task", dev.UUID)
		}
		dc, err := charDevice(devDir, gpuNode(dev.Minor))
		if err != nil {
			if backend == gpu.BackendSimulated && os.IsNotExist(err) {
				continue
			}
			return nil, fmt.Errorf("GPU %s: %w", dev.UUID, err)
		}
		out = append(out, dc)
	}
	for _, name := range controlNodes {
		dc, err := charDevice(devDir, name)
		if os.IsNotExist(err) {
			continue // nvidia-uvm appears only once a CUDA program loaded it
		}
		if err != nil {
			return nil, err
		}
		out = append(out, dc)
	}
	return out, nil
}

// charDevice describes host node devDir/name as /dev/name in the task.
func charDevice(devDir, name string) (*drivers.DeviceConfig, error) {
	host := filepath.Join(devDir, name)
	fi, err := os.Stat(host)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeCharDevice == 0 {
		return nil, fmt.Errorf("%s is not a character device", host)
	}
	return &drivers.DeviceConfig{HostPath: host, TaskPath: "/dev/" + name, Permissions: "rw"}, nil
}

// grantedDevices looks up the inventory entries of the granted UUIDs.
func (n *nodeGPUs) grantedDevices(uuids []string) ([]gpu.Device, error) {
	out := make([]gpu.Device, 0, len(uuids))
	for _, u := range uuids {
		dev, ok := n.device(u)
		if !ok {
			return nil, fmt.Errorf("GPU %s is not in caravan's inventory on this node, so an isolated task cannot be given its device node", u)
		}
		out = append(out, dev)
	}
	return out, nil
}
