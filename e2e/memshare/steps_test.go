package memshare_e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/hashicorp/nomad/api"
)

// spillResult is workloads/memshare_spill.py's summary line.
type spillResult struct {
	Batches    int     `json:"batches"`
	SpilledMiB float64 `json:"spilled_mib"`
	BadBatches int     `json:"bad_batches"`
	Verified   bool    `json:"verified"`
	WriteMiBs  float64 `json:"write_mib_s"`
	ReadMiBs   float64 `json:"read_mib_s"`
	Reconnects int     `json:"reconnects"`
}

// runJob runs one of the repo's memshare jobspecs with vars (plus the
// workloads path) and stops it when the test ends.
func runJob(t *testing.T, name string, vars map[string]string) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	vars["workloads"] = harness.TaskWorkloads
	if _, err := cluster.RunFile(filepath.Join(root, "jobspecs", name+".nomad.hcl"), vars); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.StopJob(name, 30*time.Second) })
}

// runDonors runs the data-prep donor job and waits until both nodes lend.
func runDonors(t *testing.T, ctx context.Context, vars map[string]string) {
	t.Helper()
	runJob(t, "memshare-donor", vars)
	waitLending(t, ctx)
}

// runSpilledConsumer runs the consumer job and returns its allocation once
// its batches live in remote memory (the consumer then holds them for
// vars["hold_seconds"] before reading them back).
func runSpilledConsumer(t *testing.T, ctx context.Context, vars map[string]string) *api.Allocation {
	t.Helper()
	runJob(t, "memshare-consumer", vars)
	consumer, err := cluster.WaitAlloc(ctx, "memshare-consumer", harness.TaskState("spill", "running"))
	if err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logs(consumer, "spill"), "spilled_batches") {
		select {
		case <-ctx.Done():
			t.Fatalf("consumer never spilled: %s", logs(consumer, "spill"))
		case <-time.After(250 * time.Millisecond):
		}
	}
	return consumer
}

// consumerVerified waits for the consumer to end and fails unless it
// completed with all batches read back intact; what names the moment
// ("after the restart") in the failure.
func consumerVerified(t *testing.T, ctx context.Context, batches int, what string) (*api.Allocation, spillResult) {
	t.Helper()
	done, err := cluster.WaitAlloc(ctx, "memshare-consumer", func(a *api.Allocation) bool {
		return a.ClientStatus == "complete" || a.ClientStatus == "failed"
	})
	if err != nil {
		t.Fatal(err)
	}
	out := logs(done, "spill")
	var res spillResult
	err = json.Unmarshal([]byte(lastLine(out)), &res)
	if err != nil || done.ClientStatus != "complete" || !res.Verified || res.BadBatches != 0 || res.Batches != batches {
		errOut, _ := cluster.Logs(done, "spill", "stderr")
		t.Fatalf("consumer %s %s: %+v %v\n%s\nstdout: %s\nstderr: %s", done.ClientStatus, what, res, err, harness.Events(done, "spill"), out, errOut)
	}
	return done, res
}

func logs(a *api.Allocation, task string) string {
	out, _ := cluster.Logs(a, task, "stdout")
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
