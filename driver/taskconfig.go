package driver

import (
	"errors"

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
	// RemoteMemory is accepted by the schema so jobspecs validate, but
	// StartTask refuses it until memshare lands.
	RemoteMemory string `codec:"remote_memory"`
	// Aggregator is the Consul service name of the aggregation service.
	Aggregator string `codec:"aggregator"`
}

var taskConfigSpec = hclspec.NewObject(map[string]*hclspec.Spec{
	"command":       hclspec.NewAttr("command", "string", true),
	"args":          hclspec.NewAttr("args", "list(string)", false),
	"gpus":          hclspec.NewAttr("gpus", "string", false),
	"gpu_fraction":  hclspec.NewAttr("gpu_fraction", "string", false),
	"gpu_memory":    hclspec.NewAttr("gpu_memory", "string", false),
	"gpu_uuids":     hclspec.NewAttr("gpu_uuids", "list(string)", false),
	"remote_memory": hclspec.NewAttr("remote_memory", "string", false),
	"aggregator":    hclspec.NewAttr("aggregator", "string", false),
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
	}.Parse()
}

// unavailableFeature refuses features whose backing service is not built
// yet. Failing is safer than running without: a task that asked for remote
// memory would otherwise be OOM-killed later with no hint why.
func (tc *TaskConfig) unavailableFeature() error {
	if tc.RemoteMemory != "" {
		return errors.New("remote_memory: remote memory needs memshare, which is not available in this caravan driver yet; remove remote_memory")
	}
	return nil
}
