package driver

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/caravan-dl/caravan/driver/gpu"
	"github.com/caravan-dl/caravan/driver/ledger"
	"github.com/caravan-dl/caravan/driver/mps"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// nodeGPUs is everything the driver knows about this node's GPUs: the
// inventory, the ledger of grants and the MPS daemons.
type nodeGPUs struct {
	inv     gpu.Inventory
	devices []gpu.Device
	ledger  *ledger.Ledger // nil when the state dir is unusable
	mps     *mps.Manager   // nil when MPS is off or failed to start
	mpsOn   bool
	// libDirs are the driver library dirs bound into GPU tasks' chroots.
	libDirs []string
	// isolation says how tasks are confined, for the fingerprint.
	isolation string

	health     drivers.HealthState
	healthDesc string
}

// openNodeGPUs never fails: problems make the node unhealthy, with the
// reason in the fingerprint, rather than stopping the Nomad client.
func openNodeGPUs(conf Config, opts options, logger hclog.Logger) *nodeGPUs {
	n := &nodeGPUs{inv: newInventory(conf, opts), mpsOn: *conf.MPS, isolation: isolationMode(conf)}
	devices, err := n.inv.Devices()
	if err != nil {
		return n.unhealthy(fmt.Sprintf("listing GPUs: %v", err))
	}
	n.devices = devices
	if conf.GPUBackend == gpu.BackendNVML && len(devices) > 0 && !conf.NoIsolation {
		n.libDirs = gpuLibraryDirs(conf.IsolationConfig)
	}
	if err := os.MkdirAll(conf.StateDir, 0o755); err != nil {
		return n.unhealthy(fmt.Sprintf("state_dir: %v", err))
	}
	n.ledger, err = ledger.Open(filepath.Join(conf.StateDir, "ledger.json"), devices)
	if err != nil {
		return n.unhealthy(fmt.Sprintf("GPU ledger: %v", err))
	}
	if n.mpsOn && len(devices) > 0 {
		n.mps, err = mps.New(mps.Config{
			Enabled: true,
			Binary:  conf.MPSBinary,
			BaseDir: filepath.Join(conf.StateDir, "mps"),
			Runner:  opts.mpsRunner,
			Logger:  logger.Named("mps"),
		})
		if err != nil {
			return n.unhealthy(fmt.Sprintf("CUDA MPS: %v", err))
		}
	}
	n.health, n.healthDesc = drivers.HealthStateHealthy, n.describe()+n.isolationNote()
	return n
}

func newInventory(conf Config, opts options) gpu.Inventory {
	if conf.GPUBackend == gpu.BackendSimulated {
		return gpu.NewSimulated(conf.SimulatedGPUs.simConfig())
	}
	return gpu.NewNVML(opts.nvml)
}

func (n *nodeGPUs) unhealthy(why string) *nodeGPUs {
	n.health, n.healthDesc = drivers.HealthStateUnhealthy, why+n.isolationNote()
	return n
}

// Isolation modes, as the fingerprint's driver.caravan.isolation shows them.
const (
	isolationChroot = "chroot"
	isolationNone   = "none"
)

func isolationMode(conf Config) string {
	if conf.NoIsolation {
		return isolationNone
	}
	return isolationChroot
}

// isolationNote makes the unsafe opt-out impossible to miss.
func (n *nodeGPUs) isolationNote() string {
	if n.isolation == isolationNone {
		return "; NO ISOLATION (no_isolation = true): tasks run on the host filesystem and namespaces, like raw_exec"
	}
	return ""
}

// describe is the healthy fingerprint description; it says loudly when the
// GPUs are simulated so no one mistakes them for hardware.
func (n *nodeGPUs) describe() string {
	switch n.inv.Backend() {
	case gpu.BackendSimulated:
		return fmt.Sprintf("Healthy; %d SIMULATED GPUs (no real hardware, for testing)", len(n.devices))
	case gpu.BackendNVML:
		mps := "MPS off"
		if n.mps != nil {
			mps = "MPS on"
			if err := n.mps.Check(); err != nil {
				mps = "MPS unusable, gpu_fraction tasks will fail: " + err.Error()
			}
		}
		return fmt.Sprintf("Healthy; %d NVIDIA GPUs via NVML, %s", len(n.devices), mps)
	default:
		return "Healthy; no GPUs: " + n.inv.Message()
	}
}

// device finds a GPU by UUID.
func (n *nodeGPUs) device(uuid string) (gpu.Device, bool) {
	for _, d := range n.devices {
		if d.UUID == uuid {
			return d, true
		}
	}
	return gpu.Device{}, false
}

func (n *nodeGPUs) close() {
	_ = n.inv.Close()
}
