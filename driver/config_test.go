package driver

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/helper/pluginutils/hclutils"
)

func TestPluginConfig_ParseAndDefaults(t *testing.T) {
	var c Config
	hclutils.NewConfigParser(configSpec).ParseHCL(t, `
config {
  gpu_backend = "simulated"
  simulated_gpus {
    memory_mib = 40960
    count      = 2
  }
  state_dir = "/tmp/caravan-state"
}`, &c)
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	if c.GPUBackend != "simulated" || c.SimulatedGPUs.Count != 2 || c.SimulatedGPUs.MemoryMiB != 40960 {
		t.Fatalf("decoded %+v / %+v", c, *c.SimulatedGPUs)
	}
	if c.SimulatedGPUs.Model != "Simulated GPU" {
		t.Errorf("model default = %q", c.SimulatedGPUs.Model)
	}
	if *c.MPS {
		t.Error("mps must default to false for simulated GPUs")
	}
	if c.CheckpointRoot != "/tmp/caravan-state/checkpoints" {
		t.Errorf("checkpoint_root default = %q", c.CheckpointRoot)
	}
}

func TestPluginConfig_NVMLDefaults(t *testing.T) {
	var c Config
	hclutils.NewConfigParser(configSpec).ParseHCL(t, `config {}`, &c)
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if c.GPUBackend != "nvml" || !*c.MPS || c.StateDir != DefaultStateDir ||
		c.MPSBinary != "nvidia-cuda-mps-control" {
		t.Fatalf("defaults: %+v mps=%v", c, *c.MPS)
	}
}

func TestPluginConfig_BadValues(t *testing.T) {
	sim := func(mem, count int64) *SimulatedGPU { return &SimulatedGPU{Model: "m", MemoryMiB: mem, Count: count} }
	cases := []struct {
		name string
		conf Config
		want string
	}{
		{"unknown backend", Config{GPUBackend: "cuda"}, `gpu_backend: "cuda" is not one of`},
		{"simulated without block", Config{GPUBackend: "simulated"}, "simulated_gpus: block required"},
		{"simulated block with nvml", Config{SimulatedGPUs: sim(1, 1)}, "simulated_gpus: only allowed"},
		{"zero memory", Config{GPUBackend: "simulated", SimulatedGPUs: sim(0, 1)}, "simulated_gpus.memory_mib: 0"},
		{"negative count", Config{GPUBackend: "simulated", SimulatedGPUs: sim(1, -1)}, "simulated_gpus.count: -1"},
		{"huge count", Config{GPUBackend: "simulated", SimulatedGPUs: sim(1, 1000)}, "simulated_gpus.count: 1000"},
		{"empty model", Config{GPUBackend: "simulated", SimulatedGPUs: &SimulatedGPU{MemoryMiB: 1, Count: 1}}, "simulated_gpus.model"},
		{"mps on simulated", Config{GPUBackend: "simulated", SimulatedGPUs: sim(1, 1), MPS: ptr(true)}, "mps: simulated GPUs cannot run"},
		{"relative state dir", Config{StateDir: "state"}, `state_dir: "state" must be an absolute path`},
		{"relative checkpoint root", Config{CheckpointRoot: "ckpt"}, `checkpoint_root: "ckpt" must be an absolute path`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.conf.withDefaults().validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
