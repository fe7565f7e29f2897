package scale

import (
	"fmt"
	"os"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// nodeAgentJob is a system job whose task runs on every node until
// stopped, as a fleet's log shipper or metrics exporter would. With
// CARAVAN_SCALE_NODE_AGENT=1 both sides start it before submitting.
//
// Why it matters: Nomad answers a node's allocation watch
// (Node.GetClientAllocs) from the allocs table's index while the node
// holds no allocation, so an empty node's watch returns on allocation
// writes elsewhere; and a Nomad client heartbeats (Node.UpdateStatus) after
// every RPC that succeeds. Each empty node then costs the server two
// authenticated RPCs (an RSA verification each) per nearby allocation
// write. One allocation per node turns the watch back to that node's own.
const nodeAgentJob = `job "node-agent" {
  type = "system"
  group "agent" {
    task "agent" {
      driver = "caravan"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`

func nodeAgentOn() bool { return os.Getenv("CARAVAN_SCALE_NODE_AGENT") == "1" }

// nodeCPU is each simulated node's CPU: eight GPUs' workers, plus the
// agent's share when it runs, so it takes no GPU worker's place.
func nodeCPU() int {
	if nodeAgentOn() {
		return 8*cpuPerGPU + 100
	}
	return 8 * cpuPerGPU
}

// startNodeAgent registers nodeAgentJob and waits until it runs on n nodes.
func startNodeAgent(c *harness.Cluster, n int, within time.Duration) error {
	job, err := c.API.Jobs().ParseHCL(nodeAgentJob, true)
	if err != nil {
		return err
	}
	if _, _, err := c.API.Jobs().Register(job, nil); err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	for {
		s, _, err := c.API.Jobs().Summary("node-agent", nil)
		running := 0
		if err == nil && s.Summary["agent"].Running > 0 {
			running = s.Summary["agent"].Running
		}
		if running >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node agent running on %d of %d nodes (%v)", running, n, err)
		}
		time.Sleep(time.Second)
	}
}
