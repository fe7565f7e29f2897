package driver

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/caravan-dl/caravan/driver/gpu"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"
)

// DefaultStateDir holds the ledger and MPS directories when state_dir is
// unset. Nomad does not pass its data_dir to driver plugins, so the default
// cannot follow it; set state_dir to keep state under the agent's data_dir.
const DefaultStateDir = "/var/lib/caravan"

// Config is the plugin block of the agent configuration:
//
//	plugin "caravan-driver" { config { gpu_backend = "simulated" ... } }
type Config struct {
	GPUBackend     string        `codec:"gpu_backend"`
	SimulatedGPUs  *SimulatedGPU `codec:"simulated_gpus"`
	MPS            *bool         `codec:"mps"`
	MPSBinary      string        `codec:"mps_binary"`
	StateDir       string        `codec:"state_dir"`
	CheckpointRoot string        `codec:"checkpoint_root"`
	// ConsulAddress and ConsulToken reach the Consul that has the
	// aggregator services; empty means CONSUL_HTTP_ADDR/CONSUL_HTTP_TOKEN
	// or 127.0.0.1:8500.
	ConsulAddress string `codec:"consul_address"`
	ConsulToken   string `codec:"consul_token"`
	// AggregatorKey signs aggsvc job tokens (CARAVAN_AGGREGATOR_TOKEN);
	// empty means $CARAVAN_AGGSVC_KEY of the plugin process, or no token.
	AggregatorKey string `codec:"aggregator_key"`

	// Memshare (remotemem_config.go) lends and borrows remote memory.
	Memshare *MemshareConfig `codec:"memshare"`
	// Gossip (gossip.go) runs a gossip member in the plugin; nil: off.
	Gossip *GossipConfig `codec:"gossip"`

	// IsolationConfig (isolation_config.go) confines tasks; its fields are
	// top-level keys of the plugin block and join configSpec there.
	IsolationConfig
}

// SimulatedGPU declares identical fake GPUs for nodes without NVIDIA hardware.
type SimulatedGPU struct {
	Model     string `codec:"model"`
	MemoryMiB int64  `codec:"memory_mib"`
	Count     int64  `codec:"count"`
}

var configSpec = hclspec.NewObject(map[string]*hclspec.Spec{
	"gpu_backend": hclspec.NewDefault(
		hclspec.NewAttr("gpu_backend", "string", false),
		hclspec.NewLiteral(`"nvml"`),
	),
	"simulated_gpus": hclspec.NewBlock("simulated_gpus", false, hclspec.NewObject(map[string]*hclspec.Spec{
		"model": hclspec.NewDefault(
			hclspec.NewAttr("model", "string", false),
			hclspec.NewLiteral(`"Simulated GPU"`),
		),
		"memory_mib": hclspec.NewAttr("memory_mib", "number", true),
		"count":      hclspec.NewAttr("count", "number", true),
	})),
	"mps":             hclspec.NewAttr("mps", "bool", false),
	"mps_binary":      hclspec.NewAttr("mps_binary", "string", false),
	"state_dir":       hclspec.NewAttr("state_dir", "string", false),
	"checkpoint_root": hclspec.NewAttr("checkpoint_root", "string", false),
	"consul_address":  hclspec.NewAttr("consul_address", "string", false),
	"consul_token":    hclspec.NewAttr("consul_token", "string", false),
	"aggregator_key":  hclspec.NewAttr("aggregator_key", "string", false),
})

// withDefaults fills every unset field; the result is what the driver runs.
func (c Config) withDefaults() Config {
	if c.GPUBackend == "" {
		c.GPUBackend = gpu.BackendNVML
	}
	if c.MPS == nil {
		// A simulated GPU has no MPS daemon to run.
		on := c.GPUBackend == gpu.BackendNVML
		c.MPS = &on
	}
	if c.MPSBinary == "" {
		c.MPSBinary = "nvidia-cuda-mps-control"
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir
	}
	if c.CheckpointRoot == "" {
		c.CheckpointRoot = filepath.Join(c.StateDir, "checkpoints")
	}
	c.IsolationConfig = c.IsolationConfig.withDefaults()
	return c
}

// validate checks a defaulted config and names the offending field.
func (c Config) validate() error {
	var errs []error
	switch c.GPUBackend {
	case gpu.BackendNVML:
		if c.SimulatedGPUs != nil {
			errs = append(errs, errors.New(`simulated_gpus: only allowed with gpu_backend = "simulated"`))
		}
	case gpu.BackendSimulated:
		errs = append(errs, c.validateSimulated())
		if c.MPS != nil && *c.MPS {
			errs = append(errs, errors.New(`mps: simulated GPUs cannot run CUDA MPS; set mps = false`))
		}
	default:
		errs = append(errs, fmt.Errorf(`gpu_backend: %q is not one of "nvml", "simulated"`, c.GPUBackend))
	}
	if !filepath.IsAbs(c.StateDir) {
		errs = append(errs, fmt.Errorf("state_dir: %q must be an absolute path", c.StateDir))
	}
	if !filepath.IsAbs(c.CheckpointRoot) {
		errs = append(errs, fmt.Errorf("checkpoint_root: %q must be an absolute path", c.CheckpointRoot))
	}
	errs = append(errs, c.IsolationConfig.validate())
	return errors.Join(errs...)
}

func (c Config) validateSimulated() error {
	if c.SimulatedGPUs == nil {
		return errors.New(`simulated_gpus: block required with gpu_backend = "simulated"`)
	}
	s := c.SimulatedGPUs
	if s.MemoryMiB <= 0 {
		return fmt.Errorf("simulated_gpus.memory_mib: %d must be greater than 0", s.MemoryMiB)
	}
	if s.Count < 0 || s.Count > gpu.MaxSimulatedGPUs {
		return fmt.Errorf("simulated_gpus.count: %d is out of range 0..%d", s.Count, gpu.MaxSimulatedGPUs)
	}
	return s.simConfig().Validate()
}

func (s *SimulatedGPU) simConfig() gpu.SimConfig {
	return gpu.SimConfig{Model: s.Model, MemoryMiB: uint64(s.MemoryMiB), Count: int(s.Count)}
}
