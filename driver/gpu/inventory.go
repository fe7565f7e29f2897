// Package gpu finds the GPUs a node has: through NVML (go-nvml) when the
// library is present, or a declared set of simulated GPUs that says so.
package gpu

// Backend names where an inventory's devices come from.
const (
	BackendNVML      = "nvml"
	BackendSimulated = "simulated"
	BackendNone      = "none"
)

// Device is one GPU as the driver schedules it.
type Device struct {
	Index     int
	UUID      string
	Model     string
	MemoryMiB uint64
	// Minor is the device's minor number: its node is /dev/nvidia<Minor>.
	// -1 when unknown (NVML could not say); such a GPU cannot be given to
	// an isolated task.
	Minor int
}

// Stats is a device's live usage; simulated devices report zeros.
type Stats struct {
	UUID           string
	UtilPercent    float64
	MemoryUsedMiB  uint64
	MemoryTotalMiB uint64
}

// Inventory lists devices and reads their usage.
type Inventory interface {
	// Backend is BackendNVML, BackendSimulated or BackendNone.
	Backend() string
	// Devices lists the GPUs; an absent NVML library yields none, not an error.
	Devices() ([]Device, error)
	// Stats reads one device's usage.
	Stats(uuid string) (Stats, error)
	// Message says why there are no devices, for the fingerprint ("" if fine).
	Message() string
	// Close releases the backend (nvml.Shutdown).
	Close() error
}
