package memshare_e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// TestRemoteMemorySurvivesClientRestart: while the consumer's batches live
// only in remote memory, its Nomad client agent is restarted, which kills
// and restarts the caravan plugin (its endpoint, and its node's donor with
// the slabs it lent). RecoverTask re-opens the volume from the saved
// layout at the same URI: the task (same allocation, never restarted)
// reconnects and every batch verifies, the slab its own node held rebuilt
// from the other node's copy.
func TestRemoteMemorySurvivesClientRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runDonors(t, ctx, map[string]string{"memory": "512", "seconds": "400"})
	consumer := runSpilledConsumer(t, ctx, map[string]string{"remote_memory": "64MiB", "batches": "48", "hold_seconds": "40"})
	agent := agentNamed(t, consumer.NodeName)
	t.Logf("restarting %s while the consumer's batches live only in remote memory", agent.Name)
	before, _ := os.Stat(agent.LogPath)
	start := time.Now()
	if err := agent.Restart(20 * time.Second); err != nil {
		t.Fatalf("restart %s: %v", agent.Name, err)
	}
	t.Logf("%s stopped and started again in %v", agent.Name, time.Since(start).Round(time.Millisecond))
	waitDriverHealthy(t, ctx)

	done, res := consumerVerified(t, ctx, 48, "after the restart")
	if res.Reconnects == 0 {
		t.Fatalf("the task's connection never dropped: was the plugin restarted? %+v", res)
	}
	if done.ID != consumer.ID || done.TaskStates["spill"].Restarts != 0 {
		t.Fatalf("the consumer must be recovered, not restarted: alloc %s (was %s), restarts %d", done.ID, consumer.ID, done.TaskStates["spill"].Restarts)
	}
	if ev := harness.Events(done, "spill"); strings.Contains(ev, "not recovered") {
		t.Fatalf("recovery reported a failure: %s", ev)
	}
	t.Logf("consumer after the restart: %+v", res)
	counts := pluginLog(t, agent, before.Size(), "remote memory recovered", "saved slab did not survive", "slab re-homed", "rebuild failed")
	t.Logf("%s's plugin log after the restart: %v", agent.Name, counts)
	waitReturned(t, ctx)
}

// pluginLog counts the agent's log lines past offset holding each
// phrase, and fails unless the first one is there.
func pluginLog(t *testing.T, a *harness.Agent, offset int64, must string, also ...string) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(a.LogPath)
	if err != nil || int64(len(raw)) < offset {
		t.Fatalf("agent log: %v", err)
	}
	raw = raw[offset:]
	counts := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		for _, p := range append([]string{must}, also...) {
			if strings.Contains(line, p) {
				counts[p]++
			}
		}
	}
	if counts[must] == 0 {
		t.Fatalf("%s's log never says %q", a.Name, must)
	}
	return counts
}

func agentNamed(t *testing.T, name string) *harness.Agent {
	t.Helper()
	for _, c := range cluster.Clients {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no client agent named %s", name)
	return nil
}

// waitDriverHealthy waits until every client is ready with a healthy
// caravan driver.
func waitDriverHealthy(t *testing.T, ctx context.Context) {
	t.Helper()
	for {
		stubs, _, err := cluster.API.Nodes().List(nil)
		ready, seen := 0, fmt.Sprint(err)
		for _, s := range stubs {
			if d := s.Drivers["caravan"]; s.Status == "ready" && d != nil && d.Healthy {
				ready++
			}
			seen += " " + s.Name + ":" + s.Status
		}
		if err == nil && ready == len(cluster.Clients) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("clients not ready again: %s", seen)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
