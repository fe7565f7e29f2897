package driver

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// benchDriver is a configured driver on a mocked 8-GPU DGX H100 node,
// without the gRPC harness (which needs a *testing.T).
func benchDriver(b *testing.B) *Driver {
	b.Helper()
	d := New(hclog.NewNullLogger(), WithNVML(dgxh100.New())).(*Driver)
	b.Cleanup(d.cancel)
	conf := Config{GPUBackend: "nvml", MPS: ptr(false), StateDir: b.TempDir()}
	var data []byte
	if err := base.MsgPackEncode(&data, &conf); err != nil {
		b.Fatal(err)
	}
	if err := d.SetConfig(&base.Config{PluginConfig: data}); err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkFingerprint builds the fingerprint of the 8-GPU node.
func BenchmarkFingerprint(b *testing.B) {
	d := benchDriver(b)
	b.ReportAllocs()
	for b.Loop() {
		if fp := d.buildFingerprint(); fp.Health != drivers.HealthStateHealthy {
			b.Fatal(fp.HealthDescription)
		}
	}
}

// BenchmarkAdmitRelease is the GPU part of StartTask and of a task's exit:
// admit a fraction into the persisted ledger, build its env, release it.
func BenchmarkAdmitRelease(b *testing.B) {
	d := benchDriver(b)
	node, _, _ := d.gpus()
	cfg := &drivers.TaskConfig{ID: "bench-task"}
	req := gpuRequest{Fraction: 0.25, MemMiB: 8192}
	b.ReportAllocs()
	for b.Loop() {
		a, err := d.assignGPUs(node, cfg, req, true)
		if err != nil {
			b.Fatal(err)
		}
		d.releaseGrants(node, cfg.ID, a.mpsGPUs)
	}
}
