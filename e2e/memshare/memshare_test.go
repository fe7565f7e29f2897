package memshare_e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/memshare"
	"github.com/hashicorp/nomad/api"
)

// TestSpillToDonatedMemory: donors on both clients lend; the consumer's
// batches go to remote memory mirrored across the two nodes and come back
// bit for bit; when it ends its leases are returned.
func TestSpillToDonatedMemory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runDonors(t, ctx, map[string]string{"memory": "512", "seconds": "300"})
	runJob(t, "memshare-consumer", map[string]string{"remote_memory": "64MiB", "batches": "48"})
	_, res := consumerVerified(t, ctx, 48, "spilling to donated memory")
	t.Logf("consumer: %+v", res)
	waitReturned(t, ctx)
}

// TestDonorGrowthReclaims: while the consumer's batches live only in remote
// memory, one donor task grows (SIGUSR1 through Nomad); its node stops
// lending and takes its slabs back (with only two nodes there is nowhere
// to move them, so after the grace they are freed and the consumer runs on
// the mirror); the donor task keeps running, and every batch reads back.
func TestDonorGrowthReclaims(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runDonors(t, ctx, map[string]string{"memory": "768", "seconds": "300", "grow_mib": "600"})
	runSpilledConsumer(t, ctx, map[string]string{"remote_memory": "64MiB", "batches": "48", "hold_seconds": "45"})
	donor, err := cluster.WaitAlloc(ctx, "memshare-donor", func(a *api.Allocation) bool {
		return harness.TaskState("prep", "running")(a) && strings.Contains(logs(a, "prep"), "prepared_batches")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.API.Allocations().Signal(donor, nil, "prep", "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	reclaimed := waitReclaimed(t, ctx, donor)
	t.Logf("donor %s took its memory back: %+v", reclaimed.Node, reclaimed)

	consumerVerified(t, ctx, 48, "after the reclaim")
	d, _, err := cluster.API.Allocations().Info(donor.ID, nil)
	if err != nil || d.TaskStates["prep"].State != "running" || d.TaskStates["prep"].Failed {
		t.Fatalf("the donor task must keep running after lending: %v %+v", err, d.TaskStates["prep"])
	}
}

// waitReclaimed polls until a donor lends nothing beyond its capacity and
// has stopped granting.
func waitReclaimed(t *testing.T, ctx context.Context, donor *api.Allocation) memshare.DonorStatus {
	t.Helper()
	var seen []memshare.DonorStatus
	for {
		seen = seen[:0]
		for _, addr := range donors {
			st, err := memshare.NewAPIClient(addr, []byte(key), nil).Status(ctx)
			if err == nil && !st.Accepting && st.Used <= st.Capacity && st.Capacity < 64<<20 {
				return st
			}
			seen = append(seen, st)
		}
		select {
		case <-ctx.Done():
			d, _, _ := cluster.API.Allocations().Info(donor.ID, nil)
			t.Fatalf("no donor reclaimed its memory: %+v\ndonor task: %s\n%s", seen, harness.Events(d, "prep"), logs(d, "prep"))
		case <-time.After(250 * time.Millisecond):
		}
	}
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
