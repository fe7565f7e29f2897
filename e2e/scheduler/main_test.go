// Package scheduler tests the live Caravan scheduler against real Nomad
// agents: a server and two clients with two simulated GPUs each, real
// scheduler processes, real jobs (workloads/sched_work.py).
package scheduler

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

var (
	cluster  *harness.Cluster
	schedBin string // bin of `caravan`, run as `caravan scheduler`
	repo     string
)

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	code := harness.RunWithCaravan(m, &repo, &schedBin)
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stop nomad:", err)
		}
	}
	return code
}

// useCluster starts the shared cluster on first use: a server and two
// clients with two simulated GPUs each. Benchmarks start their own.
func useCluster(tb testing.TB) *harness.Cluster {
	tb.Helper()
	if cluster != nil {
		return cluster
	}
	c, err := startCluster(2, 2)
	if err != nil {
		tb.Fatal(err)
	}
	cluster = c
	return c
}

func startCluster(clients, gpus int) (*harness.Cluster, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := harness.Start(ctx, harness.Options{
		Clients: clients,
		GPUs:    harness.GPUs{Model: "Simulated A100 40GB", MemoryMiB: 40960, Count: gpus},
	})
	if err != nil {
		return nil, fmt.Errorf("e2e: start nomad: %w", err)
	}
	return c, nil
}
