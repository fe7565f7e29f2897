package memshare_e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/memshare"
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
}

// TestSpillToDonatedMemory: donors on both clients lend; the consumer's
// batches go to remote memory mirrored across the two nodes and come back
// bit for bit; when it ends its leases are returned.
func TestSpillToDonatedMemory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	workloads := filepath.Join(root, "workloads")
	if _, err := cluster.RunFile(filepath.Join(root, "jobspecs", "memshare-donor.nomad.hcl"),
		map[string]string{"workloads": workloads, "memory": "512", "seconds": "300"}); err != nil {
		t.Fatal(err)
	}
	defer cluster.StopJob("memshare-donor", 30*time.Second)
	waitLending(t, ctx)

	if _, err := cluster.RunFile(filepath.Join(root, "jobspecs", "memshare-consumer.nomad.hcl"),
		map[string]string{"workloads": workloads, "remote_memory": "64MiB", "batches": "48"}); err != nil {
		t.Fatal(err)
	}
	defer cluster.StopJob("memshare-consumer", 30*time.Second)
	alloc, err := cluster.WaitAlloc(ctx, "memshare-consumer", func(a *api.Allocation) bool {
		return a.ClientStatus == "complete" || a.ClientStatus == "failed"
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cluster.Logs(alloc, "spill", "stdout")
	errOut, _ := cluster.Logs(alloc, "spill", "stderr")
	if alloc.ClientStatus != "complete" {
		t.Fatalf("consumer %s: %s\nstdout: %s\nstderr: %s", alloc.ClientStatus, harness.Events(alloc, "spill"), out, errOut)
	}
	var res spillResult
	if err := json.Unmarshal([]byte(lastLine(out)), &res); err != nil {
		t.Fatalf("consumer output %q: %v", out, err)
	}
	if !res.Verified || res.BadBatches != 0 || res.Batches != 48 {
		t.Fatalf("spilled batches did not verify: %+v", res)
	}
	t.Logf("consumer: %+v", res)
	waitReturned(t, ctx)
}

// waitLending polls both donors until each can lend a slab.
func waitLending(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, addr := range donors {
		api := memshare.NewAPIClient(addr, []byte(key), nil)
		for {
			st, err := api.Status(ctx)
			if err == nil && st.Accepting && st.Free >= 64<<20 {
				t.Logf("donor %s lends %d MiB", st.Node, st.Free>>20)
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("donor at %s never offered memory: %+v %v", addr, st, err)
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// waitReturned polls until the consumer's leases are freed.
func waitReturned(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, addr := range donors {
		api := memshare.NewAPIClient(addr, []byte(key), nil)
		for {
			st, err := api.Status(ctx)
			if err == nil && st.Used == 0 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("donor at %s still lends %+v after the consumer ended (%v)", addr, st, err)
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
