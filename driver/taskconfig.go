package driver

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

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

// maxWholeGPUs bounds gpus so a typo cannot ask for millions.
const maxWholeGPUs = 1024

// gpuRequest is a validated task config's GPU ask.
type gpuRequest struct {
	Whole    int     // whole GPUs; 0 if fractional or none
	Fraction float64 // share of one GPU; 0 if whole or none
	MemMiB   uint64  // GPU memory cap; 0 means proportional to Fraction
	UUIDs    []string
}

func (r gpuRequest) none() bool { return r.Whole == 0 && r.Fraction == 0 }

// parse validates the task config and returns its GPU request. Every error
// names the field so Nomad's task event tells the user what to fix.
func (tc *TaskConfig) parse() (gpuRequest, error) {
	var req gpuRequest
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if strings.TrimSpace(tc.Command) == "" {
		add(errors.New("command: must not be empty"))
	}
	add(tc.parseCount(&req))
	add(tc.parseMemory(&req))
	add(tc.parseUUIDs(&req))
	if tc.RemoteMemory != "" {
		if _, err := parseMiB(tc.RemoteMemory); err != nil {
			add(fmt.Errorf("remote_memory: %v", err))
		}
	}
	if tc.Aggregator != "" && !validServiceName(tc.Aggregator) {
		add(fmt.Errorf("aggregator: %q is not a valid Consul service name (letters, digits, dashes)", tc.Aggregator))
	}
	return req, errors.Join(errs...)
}

func (tc *TaskConfig) parseCount(req *gpuRequest) error {
	gpus, fraction := strings.TrimSpace(tc.GPUs), strings.TrimSpace(tc.GPUFraction)
	if gpus != "" && fraction != "" {
		return errors.New("gpus and gpu_fraction: set one or the other, not both")
	}
	if gpus != "" {
		g, err := strconv.ParseFloat(gpus, 64)
		if err != nil || g < 0 || g != math.Trunc(g) || g > maxWholeGPUs {
			return fmt.Errorf("gpus: %q must be a whole number from 0 to %d", gpus, maxWholeGPUs)
		}
		req.Whole = int(g)
	}
	if fraction != "" {
		f, err := strconv.ParseFloat(fraction, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return fmt.Errorf("gpu_fraction: %q must be a number greater than 0 and at most 1", fraction)
		}
		req.Fraction = f
	}
	return nil
}

func (tc *TaskConfig) parseMemory(req *gpuRequest) error {
	if tc.GPUMemory == "" {
		return nil
	}
	if strings.TrimSpace(tc.GPUFraction) == "" {
		return errors.New("gpu_memory: only applies with gpu_fraction (whole GPUs get all their memory)")
	}
	mib, err := parseMiB(tc.GPUMemory)
	if err != nil {
		return fmt.Errorf("gpu_memory: %v", err)
	}
	req.MemMiB = mib
	return nil
}

func (tc *TaskConfig) parseUUIDs(req *gpuRequest) error {
	if len(tc.GPUUUIDs) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for _, u := range tc.GPUUUIDs {
		u = strings.TrimSpace(u)
		if u == "" {
			return errors.New("gpu_uuids: entries must not be empty")
		}
		if seen[u] {
			return fmt.Errorf("gpu_uuids: %q is listed twice", u)
		}
		seen[u] = true
		req.UUIDs = append(req.UUIDs, u)
	}
	switch {
	case req.Fraction > 0 && len(req.UUIDs) != 1:
		return fmt.Errorf("gpu_uuids: a gpu_fraction task runs on one GPU, got %d UUIDs", len(req.UUIDs))
	case req.Whole > 0 && len(req.UUIDs) != req.Whole:
		return fmt.Errorf("gpu_uuids: %d UUIDs listed but gpus = %d", len(req.UUIDs), req.Whole)
	case req.none():
		return errors.New("gpu_uuids: set gpus or gpu_fraction to say how much of the pinned GPUs to use")
	}
	return nil
}

// validServiceName follows Consul's DNS-compatible service naming.
func validServiceName(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
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
