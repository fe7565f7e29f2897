package gpu

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

func TestNVMLDGXH100(t *testing.T) {
	srv := dgxh100.New()
	inv := NewNVML(srv)
	defer inv.Close()

	if inv.Backend() != BackendNVML {
		t.Fatalf("backend = %q, want %q (message %q)", inv.Backend(), BackendNVML, inv.Message())
	}
	if inv.Message() != "" {
		t.Errorf("message = %q, want empty", inv.Message())
	}
	devs, err := inv.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 8 {
		t.Fatalf("got %d devices, want 8", len(devs))
	}
	seen := map[string]bool{}
	for i, d := range devs {
		want := srv.Devices[i].(*server.Device).UUID
		if d.Index != i || d.UUID != want {
			t.Errorf("device %d = index %d uuid %q, want index %d uuid %q", i, d.Index, d.UUID, i, want)
		}
		if !strings.HasPrefix(d.UUID, "GPU-") || seen[d.UUID] {
			t.Errorf("device %d UUID %q is malformed or duplicated", i, d.UUID)
		}
		seen[d.UUID] = true
		if d.Model != "NVIDIA H100 80GB HBM3" {
			t.Errorf("device %d model = %q", i, d.Model)
		}
		if d.MemoryMiB != 81920 {
			t.Errorf("device %d memory = %d MiB, want 81920", i, d.MemoryMiB)
		}
	}
}

func TestNVMLStats(t *testing.T) {
	srv := dgxh100.New()
	d3 := srv.Devices[3].(*server.Device)
	d3.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: 42, Memory: 7}, nvml.SUCCESS
	}
	d3.MemoryInfo.Used = 10 * 1024 * mib
	inv := NewNVML(srv)
	defer inv.Close()

	s, err := inv.Stats(d3.UUID)
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{UUID: d3.UUID, UtilPercent: 42, MemoryUsedMiB: 10240, MemoryTotalMiB: 81920}
	if s != want {
		t.Errorf("stats = %+v, want %+v", s, want)
	}
	if _, err := inv.Stats("GPU-nope"); err == nil {
		t.Error("stats of an unknown UUID: want an error")
	}
	// The dgxh100 mock does not implement utilisation on other devices:
	// its panic must come back as an error.
	d0 := srv.Devices[0].(*server.Device)
	if _, err := inv.Stats(d0.UUID); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("stats on an unimplemented mock: err = %v, want a recovered panic", err)
	}
}

func TestNVMLStatsFailure(t *testing.T) {
	srv := dgxh100.New()
	d := srv.Devices[0].(*server.Device)
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST
	}
	inv := NewNVML(srv)
	defer inv.Close()
	_, err := inv.Stats(d.UUID)
	if err == nil || !strings.Contains(err.Error(), "utilisation") {
		t.Errorf("err = %v, want a utilisation error", err)
	}
}

func TestNVMLLibraryNotFound(t *testing.T) {
	shutdowns := 0
	lib := &mock.Interface{
		InitFunc:     func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND },
		ShutdownFunc: func() nvml.Return { shutdowns++; return nvml.SUCCESS },
	}
	inv := NewNVML(lib)
	assertNoGPUs(t, inv, "not found")
	if err := inv.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if shutdowns != 0 {
		t.Errorf("Shutdown called %d times after a failed Init, want 0", shutdowns)
	}
	if _, err := inv.Stats("GPU-x"); err == nil {
		t.Error("stats without NVML: want an error")
	}
}

func TestNVMLInitErrors(t *testing.T) {
	cases := []struct {
		name string
		lib  nvml.Interface
		want string
	}{
		{"driver not loaded", &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }}, "driver is not loaded"},
		{"no permission", &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_NO_PERMISSION }}, "permission"},
		{"other", &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_UNKNOWN }}, "NVML init failed"},
		// An empty mock panics in Init: the inventory must survive it.
		{"panic", &mock.Interface{}, "panicked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := NewNVML(c.lib)
			assertNoGPUs(t, inv, c.want)
			if err := inv.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}

func TestNVMLEnumerationFailureShutsDown(t *testing.T) {
	srv := dgxh100.New()
	shutdowns := 0
	srv.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	srv.ShutdownFunc = func() nvml.Return { shutdowns++; return nvml.SUCCESS }
	inv := NewNVML(srv)
	assertNoGPUs(t, inv, "enumeration failed")
	if shutdowns != 1 {
		t.Errorf("Shutdown called %d times, want 1", shutdowns)
	}
	if err := inv.Close(); err != nil || shutdowns != 1 {
		t.Errorf("close: err %v, shutdowns %d; want nil, 1", err, shutdowns)
	}
}

func TestNVMLCloseOnce(t *testing.T) {
	srv := dgxh100.New()
	shutdowns := 0
	srv.ShutdownFunc = func() nvml.Return { shutdowns++; return nvml.SUCCESS }
	inv := NewNVML(srv)
	for i := 0; i < 3; i++ {
		if err := inv.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if shutdowns != 1 {
		t.Errorf("Shutdown called %d times, want 1", shutdowns)
	}
}

func TestNVMLNoGPUsMock(t *testing.T) {
	inv := NewNVML(dgxh100.NewWithGPUs())
	defer inv.Close()
	if inv.Backend() != BackendNVML || !strings.Contains(inv.Message(), "no GPUs") {
		t.Errorf("backend %q message %q; want nvml with a no-GPU message", inv.Backend(), inv.Message())
	}
}

// TestNVMLRealLibrary uses the host's real NVML. On a machine without an
// NVIDIA driver it must report zero devices and say why, not crash.
func TestNVMLRealLibrary(t *testing.T) {
	inv := NewNVML(nil)
	defer inv.Close()
	if inv.Backend() == BackendNVML {
		devs, err := inv.Devices()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("real NVML present: %d GPU(s)", len(devs))
		for _, d := range devs {
			if !strings.HasPrefix(d.UUID, "GPU-") || d.MemoryMiB == 0 {
				t.Errorf("implausible device %+v", d)
			}
		}
		return
	}
	assertNoGPUs(t, inv, "")
	t.Logf("message: %s", inv.Message())
}

func assertNoGPUs(t *testing.T, inv Inventory, wantMsg string) {
	t.Helper()
	if inv.Backend() != BackendNone {
		t.Errorf("backend = %q, want %q", inv.Backend(), BackendNone)
	}
	devs, err := inv.Devices()
	if err != nil || len(devs) != 0 {
		t.Errorf("devices = %v, %v; want none and no error", devs, err)
	}
	if inv.Message() == "" || !strings.Contains(inv.Message(), wantMsg) {
		t.Errorf("message = %q, want it to mention %q", inv.Message(), wantMsg)
	}
}
