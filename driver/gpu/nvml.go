package gpu

import (
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

const mib = 1024 * 1024

// nvmlInventory reads GPUs through NVML. Devices are enumerated once at
// construction: a node's GPU set does not change while the plugin runs, and
// enumerating once keeps every later call cheap and free of NVML failures.
type nvmlInventory struct {
	mu      sync.Mutex
	lib     nvml.Interface
	backend string
	message string
	devices []Device
	handles map[string]nvml.Device
	open    bool // Init succeeded and Shutdown has not been called yet
}

// NewNVML returns an inventory backed by NVML; lib == nil means the real
// library (nvml.New()). It never fails: when the library is missing or
// unusable the inventory has no devices, Backend() is BackendNone and
// Message() says why.
func NewNVML(lib nvml.Interface) Inventory {
	if lib == nil {
		lib = nvml.New()
	}
	inv := &nvmlInventory{lib: lib, backend: BackendNone, handles: map[string]nvml.Device{}}
	if ret, err := guardReturn(lib.Init); err != nil {
		inv.message = fmt.Sprintf("NVML init failed: %v; no GPUs", err)
		return inv
	} else if ret != nvml.SUCCESS {
		inv.message = initFailure(ret)
		return inv
	}
	inv.open = true
	devices, handles, err := enumerate(lib)
	if err != nil {
		inv.message = fmt.Sprintf("NVML device enumeration failed: %v; no GPUs", err)
		_ = inv.shutdown()
		return inv
	}
	inv.backend, inv.devices, inv.handles = BackendNVML, devices, handles
	if len(devices) == 0 {
		inv.message = "NVML reports no GPUs on this node"
	}
	return inv
}

func initFailure(ret nvml.Return) string {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "NVML library libnvidia-ml.so.1 not found (no NVIDIA driver on this node); no GPUs"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "NVIDIA driver is not loaded; no GPUs"
	case nvml.ERROR_NO_PERMISSION:
		return "no permission to open the NVIDIA devices; no GPUs"
	default:
		return fmt.Sprintf("NVML init failed: %s; no GPUs", returnText(ret))
	}
}

// enumerate lists every device NVML reports, with its handle by UUID.
func enumerate(lib nvml.Interface) ([]Device, map[string]nvml.Device, error) {
	var devices []Device
	handles := map[string]nvml.Device{}
	err := guard(func() error {
		count, ret := lib.DeviceGetCount()
		if ret != nvml.SUCCESS {
			return fmt.Errorf("device count: %s", returnText(ret))
		}
		for i := 0; i < count; i++ {
			d, h, err := describe(lib, i)
			if err != nil {
				return err
			}
			devices = append(devices, d)
			handles[d.UUID] = h
		}
		return nil
	})
	return devices, handles, err
}

func describe(lib nvml.Interface, index int) (Device, nvml.Device, error) {
	h, ret := lib.DeviceGetHandleByIndex(index)
	if ret != nvml.SUCCESS {
		return Device{}, nil, fmt.Errorf("GPU %d handle: %s", index, returnText(ret))
	}
	uuid, ret := h.GetUUID()
	if ret != nvml.SUCCESS {
		return Device{}, nil, fmt.Errorf("GPU %d UUID: %s", index, returnText(ret))
	}
	name, ret := h.GetName()
	if ret != nvml.SUCCESS {
		return Device{}, nil, fmt.Errorf("GPU %d name: %s", index, returnText(ret))
	}
	mem, ret := h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return Device{}, nil, fmt.Errorf("GPU %d memory: %s", index, returnText(ret))
	}
	return Device{Index: index, UUID: uuid, Model: name, MemoryMiB: mem.Total / mib, Minor: minorNumber(h)}, h, nil
}

func (n *nvmlInventory) Backend() string { return n.backend }
func (n *nvmlInventory) Message() string { return n.message }

func (n *nvmlInventory) Devices() ([]Device, error) {
	return append([]Device(nil), n.devices...), nil
}

func (n *nvmlInventory) Stats(uuid string) (Stats, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	h, ok := n.handles[uuid]
	if !ok || !n.open {
		return Stats{}, fmt.Errorf("GPU %q is not in the NVML inventory", uuid)
	}
	s := Stats{UUID: uuid}
	err := guard(func() error {
		util, ret := h.GetUtilizationRates()
		if ret != nvml.SUCCESS {
			return fmt.Errorf("GPU %s utilisation: %s", uuid, returnText(ret))
		}
		mem, ret := h.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			return fmt.Errorf("GPU %s memory: %s", uuid, returnText(ret))
		}
		s.UtilPercent = float64(util.Gpu)
		s.MemoryUsedMiB, s.MemoryTotalMiB = mem.Used/mib, mem.Total/mib
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	return s, nil
}

func (n *nvmlInventory) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.shutdown()
}

// shutdown calls nvml.Shutdown once, and only after a successful Init:
// calling into an unloaded library is what makes go-nvml crash.
func (n *nvmlInventory) shutdown() error {
	if !n.open {
		return nil
	}
	n.open = false
	ret, err := guardReturn(n.lib.Shutdown)
	if err != nil {
		return fmt.Errorf("NVML shutdown: %w", err)
	}
	if ret != nvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %s", returnText(ret))
	}
	return nil
}

// returnText names an NVML return code without calling into the library
// when it may not be loaded.
func returnText(ret nvml.Return) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("NVML error %d", int32(ret))
		}
	}()
	return ret.Error()
}

// guard turns a panic from go-nvml (or an incomplete mock) into an error.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("NVML call panicked: %v", r)
		}
	}()
	return f()
}

func guardReturn(f func() nvml.Return) (ret nvml.Return, err error) {
	err = guard(func() error {
		ret = f()
		return nil
	})
	if err != nil {
		return nvml.ERROR_UNKNOWN, err
	}
	return ret, nil
}

// minorNumber is the GPU's /dev/nvidia<N> number, or -1 when NVML cannot
// tell (a mock without it, a MIG or vGPU handle): such a GPU cannot be
// given to an isolated task, but still counts in the inventory.
func minorNumber(h nvml.Device) (minor int) {
	defer func() {
		if recover() != nil {
			minor = -1
		}
	}()
	m, ret := h.GetMinorNumber()
	if ret != nvml.SUCCESS || m < 0 {
		return -1
	}
	return m
}
