// Package e2e runs Caravan against real Nomad agents on this machine: the
// nomad binary built by `make tools`, the caravan-driver plugin loaded from
// bin/plugins, real jobspecs from jobspecs/ and real processes.
package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// cluster is one combined server+client agent with a single simulated GPU,
// shared by the tests in this package; they run one at a time.
var cluster *harness.Cluster

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	return harness.RunCluster(m, harness.Options{
		GPUs:    harness.GPUs{Model: "Simulated A100 40GB", MemoryMiB: 40960, Count: 1},
		RawExec: true,
	}, &cluster)
}

func repoPath(t testing.TB, rel ...string) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, rel...)...)
}

func within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
