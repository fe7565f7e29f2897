package driver

import (
	"github.com/caravan-dl/caravan/driver/taskspec"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"
)

// TaskConfig is the config block of a task using driver = "caravan".
type TaskConfig struct {
	Command string   `codec:"command"`
	Args    []string `codec:"args"`
	// GPUs and GPUFraction are strings in the schema because cty encodes a
	// number like 0.6, which float64 cannot hold exactly, as a msgpack
	// string that Nomad's decoder then refuses; HCL numbers convert to
	// strings, so `gpu_fraction = 0.6` still works. "" means unset.
	GPUs        string   `codec:"gpus"`
	GPUFraction string   `codec:"gpu_fraction"`
	GPUMemory   string   `codec:"gpu_memory"`
	GPUUUIDs    []string `codec:"gpu_uuids"`
	// RemoteMemory borrows memory through memshare (remotemem.go);
	// MemoryDonor / DonateMemory lend this task's unused reservation.
	RemoteMemory     string `codec:"remote_memory"`
	RemoteMemoryMode string `codec:"remote_memory_mode"`
	MemoryDonor      bool   `codec:"memory_donor"`
	DonateMemory     string `codec:"donate_memory"`
	// Aggregator is the Consul service name of the aggregation service.
	Aggregator string `codec:"aggregator"`
}

var taskConfigSpec = hclspec.NewObject(map[string]*hclspec.Spec{
	"command":            hclspec.NewAttr("command", "string", true),
	"args":               hclspec.NewAttr("args", "list(string)", false),
	"gpus":               hclspec.NewAttr("gpus", "string", false),
	"gpu_fraction":       hclspec.NewAttr("gpu_fraction", "string", false),
	"gpu_memory":         hclspec.NewAttr("gpu_memory", "string", false),
	"gpu_uuids":          hclspec.NewAttr("gpu_uuids", "list(string)", false),
	"remote_memory":      hclspec.NewAttr("remote_memory", "string", false),
	"aggregator":         hclspec.NewAttr("aggregator", "string", false),
	"remote_memory_mode": hclspec.NewAttr("remote_memory_mode", "string", false),
	"memory_donor":       hclspec.NewAttr("memory_donor", "bool", false),
	"donate_memory":      hclspec.NewAttr("donate_memory", "string", false),
})

// gpuRequest is a validated task config's GPU ask.
type gpuRequest = taskspec.Request

// parse validates the task config and returns its GPU request. The rules
// live in taskspec, which the scheduler uses too, so both agree on what
// is valid; every error names the field so Nomad's task event tells the
// user what to fix.
func (tc *TaskConfig) parse() (gpuRequest, error) {
	return taskspec.Config{
		Command: tc.Command, Args: tc.Args, GPUs: tc.GPUs, GPUFraction: tc.GPUFraction,
		GPUMemory: tc.GPUMemory, GPUUUIDs: tc.GPUUUIDs, RemoteMemory: tc.RemoteMemory, Aggregator: tc.Aggregator,
		MemoryDonor: tc.MemoryDonor, DonateMemory: tc.DonateMemory, RemoteMemoryMode: tc.RemoteMemoryMode,
	}.Parse()
}

// unavailableFeature refuses features whose backing service is not built
// yet. Failing is safer than running without. (remote_memory is served by
// memshare now; nodes without a memshare block refuse it in StartTask.)
func (tc *TaskConfig) unavailableFeature() error {
	return nil
}
