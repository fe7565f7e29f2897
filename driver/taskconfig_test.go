package driver

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/helper/pluginutils/hclutils"
)

func TestTaskConfig_ParseHCL(t *testing.T) {
	var tc TaskConfig
	hclutils.NewConfigParser(taskConfigSpec).ParseHCL(t, `
config {
  command      = "python"
  args         = ["train.py"]
  gpu_fraction = 0.25
  gpu_memory   = "4GiB"
  gpu_uuids    = ["GPU-1"]
}`, &tc)
	req, err := tc.parse()
	if err != nil {
		t.Fatal(err)
	}
	if tc.GPUs != "" {
		t.Errorf("unset gpus decoded as %q", tc.GPUs)
	}
	if req.Fraction != 0.25 || req.MemMiB != 4096 || req.Whole != 0 || len(req.UUIDs) != 1 {
		t.Fatalf("request %+v", req)
	}
}

// 0.6 has no exact float64, so cty sends it as a msgpack string; a numeric
// field would fail to decode (found on a real agent).
func TestTaskConfig_InexactFraction(t *testing.T) {
	var tc TaskConfig
	hclutils.NewConfigParser(taskConfigSpec).ParseHCL(t, `
config {
  command      = "python"
  gpu_fraction = 0.6
}`, &tc)
	req, err := tc.parse()
	if err != nil || req.Fraction != 0.6 {
		t.Fatalf("req %+v err %v", req, err)
	}
}

func TestTaskConfig_PlainNumberMemory(t *testing.T) {
	var tc TaskConfig
	hclutils.NewConfigParser(taskConfigSpec).ParseHCL(t, `
config {
  command      = "python"
  gpu_fraction = 0.5
  gpu_memory   = 2048
}`, &tc)
	req, err := tc.parse()
	if err != nil || req.MemMiB != 2048 {
		t.Fatalf("req %+v err %v", req, err)
	}
}

func TestTaskConfig_Whole(t *testing.T) {
	var tc TaskConfig
	hclutils.NewConfigParser(taskConfigSpec).ParseHCL(t, `
config {
  command = "python"
  gpus    = 2
}`, &tc)
	req, err := tc.parse()
	if err != nil || req.Whole != 2 || req.Fraction != 0 {
		t.Fatalf("req %+v err %v", req, err)
	}
}

func TestTaskConfig_BadValues(t *testing.T) {
	cases := []struct {
		name string
		tc   TaskConfig
		want string
	}{
		{"empty command", TaskConfig{Command: " "}, "command: must not be empty"},
		{"both", TaskConfig{Command: "x", GPUs: "1", GPUFraction: "0.5"}, "gpus and gpu_fraction: set one or the other"},
		{"negative gpus", TaskConfig{Command: "x", GPUs: "-1"}, `gpus: "-1" must be a whole number`},
		{"fractional gpus", TaskConfig{Command: "x", GPUs: "1.5"}, `gpus: "1.5" must be a whole number`},
		{"gpus not a number", TaskConfig{Command: "x", GPUs: "two"}, `gpus: "two" must be a whole number`},
		{"fraction not a number", TaskConfig{Command: "x", GPUFraction: "half"}, `gpu_fraction: "half" must be a number`},
		{"too many gpus", TaskConfig{Command: "x", GPUs: "5000"}, `gpus: "5000"`},
		{"zero fraction", TaskConfig{Command: "x", GPUFraction: "0"}, `gpu_fraction: "0" must be a number greater than 0`},
		{"fraction above 1", TaskConfig{Command: "x", GPUFraction: "1.5"}, `gpu_fraction: "1.5"`},
		{"negative fraction", TaskConfig{Command: "x", GPUFraction: "-0.1"}, `gpu_fraction: "-0.1"`},
		{"memory without fraction", TaskConfig{Command: "x", GPUMemory: "1GiB"}, "gpu_memory: only applies with gpu_fraction"},
		{"memory garbage", TaskConfig{Command: "x", GPUFraction: "0.5", GPUMemory: "lots"}, `gpu_memory: "lots" is not a size`},
		{"memory zero", TaskConfig{Command: "x", GPUFraction: "0.5", GPUMemory: "0MiB"}, "gpu_memory: \"0MiB\" must be greater than 0"},
		{"memory negative", TaskConfig{Command: "x", GPUFraction: "0.5", GPUMemory: "-4GiB"}, "gpu_memory:"},
		{"empty uuid", TaskConfig{Command: "x", GPUs: "1", GPUUUIDs: []string{""}}, "gpu_uuids: entries must not be empty"},
		{"duplicate uuid", TaskConfig{Command: "x", GPUs: "2", GPUUUIDs: []string{"a", "a"}}, `gpu_uuids: "a" is listed twice`},
		{"uuids vs count", TaskConfig{Command: "x", GPUs: "2", GPUUUIDs: []string{"a"}}, "gpu_uuids: 1 UUIDs listed but gpus = 2"},
		{"fraction two uuids", TaskConfig{Command: "x", GPUFraction: "0.5", GPUUUIDs: []string{"a", "b"}}, "gpu_uuids: a gpu_fraction task runs on one GPU"},
		{"uuids alone", TaskConfig{Command: "x", GPUUUIDs: []string{"a"}}, "gpu_uuids: set gpus or gpu_fraction"},
		{"remote memory garbage", TaskConfig{Command: "x", RemoteMemory: "8 bananas"}, "remote_memory:"},
		{"aggregator name", TaskConfig{Command: "x", Aggregator: "agg svc!"}, `aggregator: "agg svc!" is not a valid Consul service name`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.tc.parse()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want error containing %q", err, c.want)
			}
		})
	}
}

func TestTaskConfig_UnavailableFeatures(t *testing.T) {
	tc := TaskConfig{Command: "x", RemoteMemory: "8GiB"}
	if _, err := tc.parse(); err != nil {
		t.Fatalf("a well-formed remote_memory must validate: %v", err)
	}
	if err := tc.unavailableFeature(); err != nil {
		t.Fatalf("remote_memory is served by memshare now, got %v", err)
	}
	tc = TaskConfig{Command: "x", Aggregator: "caravan-aggsvc"}
	if err := tc.unavailableFeature(); err != nil {
		t.Fatalf("aggregator is served by Consul discovery, got %v", err)
	}
}
