package ledger

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/caravan-dl/caravan/driver/gpu"
)

// devices makes GPUs with the given memory sizes (MiB), index i → "GPU-i".
func devices(mem ...uint64) []gpu.Device {
	out := make([]gpu.Device, len(mem))
	for i, m := range mem {
		out[i] = gpu.Device{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Model: "test", MemoryMiB: m}
	}
	return out
}

func openTemp(t *testing.T, devs []gpu.Device) (*Ledger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "ledger.json")
	l, err := Open(path, devs)
	if err != nil {
		t.Fatal(err)
	}
	return l, path
}

func mustAdmit(t *testing.T, l *Ledger, task string, req Request) Grant {
	t.Helper()
	g, err := l.Admit(task, req)
	if err != nil {
		t.Fatalf("admit %s %+v: %v", task, req, err)
	}
	return g
}
