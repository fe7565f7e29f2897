package gpu

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
)

// MaxSimulatedGPUs bounds SimConfig.Count.
const MaxSimulatedGPUs = 64

// SimConfig declares the simulated GPUs of a node without NVIDIA hardware.
type SimConfig struct {
	Model     string
	MemoryMiB uint64
	Count     int
	// Host seeds the UUIDs; "" means os.Hostname(). Distinct hosts get
	// distinct UUIDs so a cluster of simulated nodes has no duplicates.
	Host string
}

// Validate says what is wrong with the declaration, naming the field.
func (c SimConfig) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Model) == "" {
		errs = append(errs, errors.New("simulated_gpus.model must not be empty"))
	}
	if c.MemoryMiB == 0 {
		errs = append(errs, errors.New("simulated_gpus.memory_mib must be greater than 0"))
	}
	if c.Count < 0 || c.Count > MaxSimulatedGPUs {
		errs = append(errs, fmt.Errorf("simulated_gpus.count %d is out of range 0..%d", c.Count, MaxSimulatedGPUs))
	}
	return errors.Join(errs...)
}

type simulated struct {
	backend string
	message string
	devices []Device
}

// NewSimulated returns an inventory of declared, obviously fake GPUs:
// UUIDs read GPU-SIMULATED-<host hash>-<index>. An invalid declaration
// yields no devices, BackendNone and the validation error as Message().
func NewSimulated(cfg SimConfig) Inventory {
	if err := cfg.Validate(); err != nil {
		return &simulated{backend: BackendNone, message: "invalid simulated GPUs: " + err.Error()}
	}
	host := cfg.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	s := &simulated{backend: BackendSimulated}
	for i := 0; i < cfg.Count; i++ {
		s.devices = append(s.devices, Device{
			Index:     i,
			Minor:     i,
			UUID:      SimulatedUUID(host, i),
			Model:     cfg.Model,
			MemoryMiB: cfg.MemoryMiB,
		})
	}
	if cfg.Count == 0 {
		s.message = "simulated GPU count is 0"
	}
	return s
}

// SimulatedUUID is the UUID of simulated GPU index on host.
func SimulatedUUID(host string, index int) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(host))
	return fmt.Sprintf("GPU-SIMULATED-%08x-%d", h.Sum32(), index)
}

// IsSimulatedUUID tells a simulated GPU's UUID from a real one.
func IsSimulatedUUID(uuid string) bool {
	return strings.HasPrefix(uuid, "GPU-SIMULATED-")
}

func (s *simulated) Backend() string { return s.backend }
func (s *simulated) Message() string { return s.message }
func (s *simulated) Close() error    { return nil }

func (s *simulated) Devices() ([]Device, error) {
	return append([]Device(nil), s.devices...), nil
}

func (s *simulated) Stats(uuid string) (Stats, error) {
	for _, d := range s.devices {
		if d.UUID == uuid {
			return Stats{UUID: uuid, MemoryTotalMiB: d.MemoryMiB}, nil
		}
	}
	return Stats{}, fmt.Errorf("GPU %q is not a simulated GPU of this node", uuid)
}
