package gpu

import (
	"fmt"
	"strings"
	"testing"
)

func TestSimulated(t *testing.T) {
	inv := NewSimulated(SimConfig{Model: "Sim A100", MemoryMiB: 40960, Count: 3, Host: "node-a"})
	if inv.Backend() != BackendSimulated || inv.Message() != "" {
		t.Fatalf("backend %q message %q", inv.Backend(), inv.Message())
	}
	devs, _ := inv.Devices()
	if len(devs) != 3 {
		t.Fatalf("got %d devices, want 3", len(devs))
	}
	for i, d := range devs {
		want := fmt.Sprintf("GPU-SIMULATED-%s-%d", strings.Split(devs[0].UUID, "-")[2], i)
		if d.Index != i || d.UUID != want || d.Model != "Sim A100" || d.MemoryMiB != 40960 {
			t.Errorf("device %d = %+v", i, d)
		}
		if !IsSimulatedUUID(d.UUID) {
			t.Errorf("%q not recognised as simulated", d.UUID)
		}
		s, err := inv.Stats(d.UUID)
		if err != nil || s != (Stats{UUID: d.UUID, MemoryTotalMiB: 40960}) {
			t.Errorf("stats %+v, %v", s, err)
		}
	}
	if len(strings.Split(devs[0].UUID, "-")[2]) != 8 {
		t.Errorf("host hash in %q is not 8 hex digits", devs[0].UUID)
	}
	if _, err := inv.Stats("GPU-other"); err == nil {
		t.Error("stats of unknown UUID: want error")
	}
	if err := inv.Close(); err != nil {
		t.Error(err)
	}
}

func TestSimulatedDeterministic(t *testing.T) {
	a, _ := NewSimulated(SimConfig{Model: "m", MemoryMiB: 1, Count: 2, Host: "h1"}).Devices()
	b, _ := NewSimulated(SimConfig{Model: "m", MemoryMiB: 1, Count: 2, Host: "h1"}).Devices()
	c, _ := NewSimulated(SimConfig{Model: "m", MemoryMiB: 1, Count: 2, Host: "h2"}).Devices()
	if a[1].UUID != b[1].UUID {
		t.Errorf("same host gave %q and %q", a[1].UUID, b[1].UUID)
	}
	if a[1].UUID == c[1].UUID {
		t.Errorf("different hosts share UUID %q", a[1].UUID)
	}
	// Without a Host, the machine's hostname is used, still deterministically.
	d, _ := NewSimulated(SimConfig{Model: "m", MemoryMiB: 1, Count: 1}).Devices()
	e, _ := NewSimulated(SimConfig{Model: "m", MemoryMiB: 1, Count: 1}).Devices()
	if d[0].UUID != e[0].UUID || !IsSimulatedUUID(d[0].UUID) {
		t.Errorf("hostname UUIDs %q, %q", d[0].UUID, e[0].UUID)
	}
}

func TestSimulatedValidation(t *testing.T) {
	cases := []struct {
		cfg  SimConfig
		want string
	}{
		{SimConfig{Model: "", MemoryMiB: 1, Count: 1}, "simulated_gpus.model must not be empty"},
		{SimConfig{Model: "  ", MemoryMiB: 1, Count: 1}, "simulated_gpus.model must not be empty"},
		{SimConfig{Model: "m", MemoryMiB: 0, Count: 1}, "simulated_gpus.memory_mib must be greater than 0"},
		{SimConfig{Model: "m", MemoryMiB: 1, Count: -1}, "simulated_gpus.count -1 is out of range 0..64"},
		{SimConfig{Model: "m", MemoryMiB: 1, Count: 65}, "simulated_gpus.count 65 is out of range 0..64"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.cfg, err, c.want)
		}
		inv := NewSimulated(c.cfg)
		devs, _ := inv.Devices()
		if inv.Backend() != BackendNone || len(devs) != 0 || !strings.Contains(inv.Message(), c.want) {
			t.Errorf("%+v: backend %q, %d devices, message %q", c.cfg, inv.Backend(), len(devs), inv.Message())
		}
	}
	// Boundary values are valid.
	for _, n := range []int{0, 64} {
		cfg := SimConfig{Model: "m", MemoryMiB: 1, Count: n}
		if err := cfg.Validate(); err != nil {
			t.Errorf("count %d: %v", n, err)
		}
		devs, _ := NewSimulated(cfg).Devices()
		if len(devs) != n {
			t.Errorf("count %d: got %d devices", n, len(devs))
		}
	}
	if msg := NewSimulated(SimConfig{Model: "m", MemoryMiB: 1}).Message(); msg == "" {
		t.Error("count 0: want a message saying why there are no GPUs")
	}
}
