package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// ddpJob is a PyTorch DDP job as users write it: one group, count = 2,
// no rendezvous glue; the scheduler gives each worker torchrun's env.
func ddpJob(id string) string {
	return fmt.Sprintf(`job %q {
  type      = "batch"
  node_pool = "caravan-queue"
  group "worker" {
    count = 2
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "work" {
      driver = "caravan"
      config {
        command = "/usr/bin/python3"
        args    = ["%s/ddp_gang.py", "--steps", "20"]
        gpus    = 1
      }
      resources {
        cpu    = 200
        memory = 1024
      }
    }
  }
}
`, id, harness.TaskWorkloads)
}

// A 2-worker DDP job (count = 2) goes through the queue and trains across
// the two clients with gloo: one GPU is busy on each client, so the gang
// must span both, and both ranks end with the same weights.
func TestDDPGangAcrossTwoClients(t *testing.T) {
	// fifo's default placement (YARN) keeps a gang on one node; a DDP job
	// across nodes wants a placement that may spread.
	// Both clients run on this host: rank 0 is reached on loopback.
	startScheduler(t, "-policy", "fifo+consolidated", "-rendezvous-addr", "127.0.0.1")
	nodes, _, err := cluster.API.Nodes().List(nil)
	if err != nil || len(nodes) != 2 {
		t.Fatalf("want 2 clients: %v %v", len(nodes), err)
	}
	var fillers []string
	for i, n := range nodes {
		id := fmt.Sprintf("filler-%d", i)
		fillers = append(fillers, id)
		submit(t, work{ID: id, Seconds: 120, Extra: fmt.Sprintf("  constraint {\n    attribute = \"${node.unique.name}\"\n    value     = %q\n  }\n", n.Name)})
	}
	waitFor(t, 90*time.Second, "a filler on each client", func() (bool, string) {
		on := map[string]bool{}
		for _, id := range fillers {
			for _, a := range allocs(t, id) {
				if running(a) {
					on[a.NodeID] = true
				}
			}
		}
		return len(on) == 2, clusterState(t)
	})
	if _, err := cluster.RunHCL(ddpJob("ddp"), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { purge("ddp") })
	waitDone(t, "ddp", 2, 180*time.Second)
	as := allocs(t, "ddp")
	if len(as) != 2 || as[0].NodeID == as[1].NodeID {
		t.Fatalf("want the 2 workers on 2 clients: %s", describe(as))
	}
	out := stdout(t, "ddp")
	for _, want := range []string{"caravan-ddp rank 0/2", "caravan-ddp rank 1/2", "master 127.0.0.1:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Count(out, "in-sync") != 2 {
		t.Fatalf("ranks out of sync:\n%s", out)
	}
	job := jobInfo(t, "ddp")
	if len(job.TaskGroups) != 2 || *job.TaskGroups[0].Name != "worker-0" {
		t.Fatalf("admitted groups: %v", names(job.TaskGroups))
	}
	t.Logf("DDP across two clients:\n%s", out)
}

func names(tgs []*api.TaskGroup) []string {
	var out []string
	for _, tg := range tgs {
		out = append(out, *tg.Name)
	}
	return out
}
