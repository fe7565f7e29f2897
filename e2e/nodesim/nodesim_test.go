// Package nodesim_test checks the in-process simulated Nomad clients
// against a real Nomad server: they register with the caravan driver's
// real fingerprint, run allocations for the duration in their meta, and
// end them when the server stops them.
package nodesim_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/internal/nodesim"
)

var (
	cluster *harness.Cluster
	sims    *nodesim.Set
)

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := harness.Start(ctx, harness.Options{Clients: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start cluster:", err)
		return 1
	}
	cluster = c
	s, err := nodesim.Start(nodesim.Config{Servers: []string{c.Server.RPCAddr}, Nodes: 3, GPUs: 4, LogLevel: hclog.Error})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start simulated nodes:", err)
		c.Stop()
		return 1
	}
	sims = s
	code := m.Run()
	if err := s.Shutdown(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: nodesim shutdown:", err)
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop:", err)
	}
	os.RemoveAll(s.Dir)
	if code == 0 {
		os.RemoveAll(c.Dir)
	}
	return code
}

// The three simulated nodes are ready beside the real client, with the
// caravan driver healthy and its real fingerprint: 4 simulated GPUs each.
func TestSimulatedNodesRegisterWithCaravanGPUs(t *testing.T) {
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		n, why := simReady()
		if n == 3 {
			return
		}
		last = why
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("simulated nodes not ready: %s", last)
}

func simReady() (int, string) {
	stubs, _, err := cluster.API.Nodes().List(&api.QueryOptions{Filter: `Meta["caravan.nodesim"] == "true"`})
	if err != nil {
		return 0, err.Error()
	}
	ready := 0
	var why []string
	for _, s := range stubs {
		node, _, err := cluster.API.Nodes().Info(s.ID, nil)
		if err != nil {
			return 0, err.Error()
		}
		d := node.Drivers["caravan"]
		if node.Status != "ready" || d == nil || !d.Healthy {
			why = append(why, fmt.Sprintf("%s status=%s driver=%v", node.Name, node.Status, d))
			continue
		}
		if d.Attributes["driver.caravan.gpu.count"] != "4" || d.Attributes["driver.caravan.gpu.backend"] != "simulated" {
			why = append(why, fmt.Sprintf("%s attributes %v", node.Name, d.Attributes))
			continue
		}
		ready++
	}
	return ready, fmt.Sprintf("%d of %d ready; %s", ready, len(stubs), strings.Join(why, "; "))
}

// A batch job pinned to a simulated node runs for its meta duration and
// completes; a service job runs until it is stopped, then its allocation
// ends.
func TestSimulatedAllocationsRunAndStop(t *testing.T) {
	if n, why := simReady(); n != 3 {
		t.Skip("nodes not ready: " + why)
	}
	batch := simJob(t, "sim-batch", "batch")
	batch.Meta = map[string]string{nodesim.DurationMeta: "2s"}
	if _, _, err := cluster.API.Jobs().Register(batch, nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, "sim-batch", "complete")

	svc := simJob(t, "sim-service", "service")
	if _, _, err := cluster.API.Jobs().Register(svc, nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, "sim-service", "running")
	if _, _, err := cluster.API.Jobs().Deregister("sim-service", false, nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, "sim-service", "complete")
}

func simJob(t *testing.T, id, typ string) *api.Job {
	t.Helper()
	hcl := fmt.Sprintf(`job %q {
  type = %q
  constraint {
    attribute = "${meta.caravan.nodesim}"
    value     = "true"
  }
  group "g" {
    task "t" {
      driver = "caravan"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`, id, typ)
	j, err := cluster.API.Jobs().ParseHCL(hcl, true)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func waitStatus(t *testing.T, job, status string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		allocs, _, err := cluster.API.Jobs().Allocations(job, true, nil)
		if err == nil && len(allocs) > 0 {
			last = allocs[0].ClientStatus + " on " + allocs[0].NodeName
			if allocs[0].ClientStatus == status {
				if !strings.HasPrefix(allocs[0].NodeName, "sim-") {
					t.Fatalf("%s ran on %s, not a simulated node", job, allocs[0].NodeName)
				}
				return
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s never %s; last %s", job, status, last)
}
