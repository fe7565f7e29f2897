package mps

import (
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/driver/ledger"
)

func TestTaskEnv(t *testing.T) {
	cases := []struct {
		name string
		g    ledger.Grant
		pipe string
		want map[string]string
	}{
		{"half with MPS", ledger.Grant{UUID: "GPU-a", Fraction: 0.5, MemMiB: 40960}, "/s/GPU-a/pipe", map[string]string{
			"CUDA_VISIBLE_DEVICES":              "GPU-a",
			"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "50",
			"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT":  "0=40960M",
			"CUDA_MPS_PIPE_DIRECTORY":           "/s/GPU-a/pipe",
		}},
		{"no MPS daemon", ledger.Grant{UUID: "GPU-b", Fraction: 0.25, MemMiB: 1024}, "", map[string]string{
			"CUDA_VISIBLE_DEVICES":              "GPU-b",
			"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25",
			"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT":  "0=1024M",
		}},
		{"rounds to nearest percent", ledger.Grant{UUID: "GPU-c", Fraction: 1.0 / 3, MemMiB: 1}, "", map[string]string{
			"CUDA_VISIBLE_DEVICES":              "GPU-c",
			"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "33",
			"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT":  "0=1M",
		}},
		{"rounds half up", ledger.Grant{UUID: "GPU-c", Fraction: 0.125, MemMiB: 8}, "", map[string]string{
			"CUDA_VISIBLE_DEVICES":              "GPU-c",
			"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "13",
			"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT":  "0=8M",
		}},
		{"tiny fraction gets at least 1%", ledger.Grant{UUID: "GPU-d", Fraction: 0.001, MemMiB: 10}, "", map[string]string{
			"CUDA_VISIBLE_DEVICES":              "GPU-d",
			"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "1",
			"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT":  "0=10M",
		}},
		{"whole", ledger.Grant{UUID: "GPU-e", Fraction: 1, MemMiB: 81920}, "/p", map[string]string{
			"CUDA_VISIBLE_DEVICES":              "GPU-e",
			"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "100",
			"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT":  "0=81920M",
			"CUDA_MPS_PIPE_DIRECTORY":           "/p",
		}},
		{"no memory limit", ledger.Grant{UUID: "GPU-f", Fraction: 0.5}, "", map[string]string{
			"CUDA_VISIBLE_DEVICES":              "GPU-f",
			"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "50",
		}},
	}
	for _, c := range cases {
		if got := TaskEnv(c.g, c.pipe); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestWholeGPUEnv(t *testing.T) {
	none := map[string]string{}
	cases := map[string]map[string]string{
		"":                   none,
		"void":               none,
		"none":               none,
		" NONE ":             none,
		"all":                none, // unset keeps every GPU visible
		",":                  none,
		"GPU-a":              {"CUDA_VISIBLE_DEVICES": "GPU-a"},
		"GPU-a,GPU-b":        {"CUDA_VISIBLE_DEVICES": "GPU-a,GPU-b"},
		" GPU-a , ,GPU-b , ": {"CUDA_VISIBLE_DEVICES": "GPU-a,GPU-b"},
		"0,1":                {"CUDA_VISIBLE_DEVICES": "0,1"},
		"MIG-1234-abcd/1/0":  {"CUDA_VISIBLE_DEVICES": "MIG-1234-abcd/1/0"},
	}
	for in, want := range cases {
		if got := WholeGPUEnv(in); !reflect.DeepEqual(got, want) {
			t.Errorf("WholeGPUEnv(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestWholeGrantsEnv(t *testing.T) {
	got := WholeGrantsEnv([]ledger.Grant{{UUID: "GPU-2", Index: 2}, {UUID: "GPU-0", Index: 0}})
	if want := map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-2,GPU-0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := WholeGrantsEnv(nil); len(got) != 0 {
		t.Errorf("no grants: got %v", got)
	}
}
