package driver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// freeFraction reads GPU index i's free fraction from a fresh fingerprint.
func freeFraction(t *testing.T, td *testDriver, i int) float64 {
	t.Helper()
	fp := td.fingerprint(t)
	a, ok := fp.Attributes[fmt.Sprintf("unique.driver.caravan.gpu.%d.free_fraction", i)]
	if !ok {
		t.Fatalf("no free_fraction for GPU %d in %v", i, fp.Attributes)
	}
	f, _ := a.GetFloat()
	return f
}

func TestFingerprint_Simulated(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 2))
	fp := td.fingerprint(t)
	if fp.Health != drivers.HealthStateHealthy || !strings.Contains(fp.HealthDescription, "SIMULATED") {
		t.Fatalf("health %q %q", fp.Health, fp.HealthDescription)
	}
	str := func(k string) string { s, _ := fp.Attributes[k].GetString(); return s }
	num := func(k string) int64 { n, _ := fp.Attributes[k].GetInt(); return n }
	if str("driver.caravan.gpu.backend") != "simulated" || num("driver.caravan.gpu.count") != 2 {
		t.Fatalf("attributes %v", fp.Attributes)
	}
	for i := 0; i < 2; i++ {
		p := fmt.Sprintf("driver.caravan.gpu.%d.", i)
		if !strings.HasPrefix(str(p+"uuid"), "GPU-SIMULATED-") || str(p+"model") != "Test GPU" ||
			num(p+"memory_mib") != 81920 || num("unique."+p+"free_memory_mib") != 81920 {
			t.Errorf("GPU %d attributes wrong: %v", i, fp.Attributes)
		}
	}
}

// A grant re-sends the fingerprint on the open stream, without waiting
// for the periodic tick.
func TestFingerprint_ResentOnLedgerChange(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	ctx, cancel := contextWithCancel()
	defer cancel()
	ch, err := td.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	<-ch // initial
	task := td.newTask(t, "fp", "sleep 30", TaskConfig{GPUFraction: "0.4", GPUMemory: "10GiB"})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	defer td.DestroyTask(task.ID, true)
	select {
	case fp := <-ch:
		f, _ := fp.Attributes["unique.driver.caravan.gpu.0.free_fraction"].GetFloat()
		m, _ := fp.Attributes["unique.driver.caravan.gpu.0.free_memory_mib"].GetInt()
		if f != 0.6 || m != 81920-10240 {
			t.Fatalf("after grant free_fraction=%v free_memory_mib=%v", f, m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fingerprint not re-sent after the ledger changed")
	}
}

func TestFingerprint_DGXH100Mock(t *testing.T) {
	conf := Config{GPUBackend: "nvml", MPS: ptr(false), StateDir: t.TempDir()}
	td := newTestDriver(t, conf, WithNVML(dgxh100.New()))
	fp := td.fingerprint(t)
	if fp.Health != drivers.HealthStateHealthy {
		t.Fatalf("health %q %q", fp.Health, fp.HealthDescription)
	}
	if s, _ := fp.Attributes["driver.caravan.gpu.backend"].GetString(); s != "nvml" {
		t.Fatalf("backend %q", s)
	}
	if n, _ := fp.Attributes["driver.caravan.gpu.count"].GetInt(); n != 8 {
		t.Fatalf("count %d", n)
	}
	model, _ := fp.Attributes["driver.caravan.gpu.7.model"].GetString()
	mem, _ := fp.Attributes["driver.caravan.gpu.7.memory_mib"].GetInt()
	uuid, _ := fp.Attributes["driver.caravan.gpu.7.uuid"].GetString()
	if !strings.Contains(model, "H100") || mem < 80000 || !strings.HasPrefix(uuid, "GPU-") {
		t.Fatalf("GPU 7: model %q mem %d uuid %q", model, mem, uuid)
	}
	if f, _ := fp.Attributes["unique.driver.caravan.gpu.7.free_fraction"].GetFloat(); f != 1 {
		t.Errorf("free_fraction %v", f)
	}
}

func TestFingerprint_UnusableStateDirIsUnhealthy(t *testing.T) {
	conf := simConfig("/proc/caravan-cannot-create", 1)
	td := newTestDriver(t, conf)
	fp := td.fingerprint(t)
	if fp.Health != drivers.HealthStateUnhealthy || !strings.Contains(fp.HealthDescription, "state_dir") {
		t.Fatalf("health %q %q", fp.Health, fp.HealthDescription)
	}
}
