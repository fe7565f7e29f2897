package scale

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/caravan-dl/caravan/internal/nodesim"
	"github.com/caravan-dl/caravan/scheduler/live"
)

// gang is one job of the workload: workers of one GPU each, and how long
// its simulated tasks run.
type gang struct {
	ID       string
	Workers  int
	Duration time.Duration
	// Never marks a backlog gang: a constraint no node meets keeps it
	// queued for the whole run (backlog_test.go).
	Never bool
	// Oversize makes a backlog gang fail on resources instead: its worker
	// asks twice a node's CPU (backlog_test.go).
	Oversize bool
}

// mix draws n gangs with Philly's size law for 1–8 GPU jobs (about 70 % one
// GPU, then 2, 4 and 8 in decreasing shares, as in the Philly trace) and
// short simulated run times (10–60 s), seeded.
func mix(n int, seed uint64) []gang {
	rng := rand.New(rand.NewPCG(seed, 7))
	sizes := []struct {
		workers int
		share   float64
	}{{1, 0.70}, {2, 0.12}, {4, 0.10}, {8, 0.08}}
	out := make([]gang, n)
	for i := range out {
		r, w := rng.Float64(), 8
		for _, s := range sizes {
			if r < s.share {
				w = s.workers
				break
			}
			r -= s.share
		}
		out[i] = gang{ID: fmt.Sprintf("scale-%05d", i), Workers: w, Duration: time.Duration(10+rng.IntN(51)) * time.Second}
	}
	return out
}

// cpuPerGPU makes Nomad's own CPU bin packing stand for GPUs when jobs go
// straight to Nomad (which cannot see GPU shares): a simulated node offers
// 64,000 MHz for its 8 GPUs, a worker asks 8,000 per GPU.
const cpuPerGPU = 8000

// submitParked (CARAVAN_SCALE_SUBMIT_PARKED=1) submits caravan's jobs
// already parked (scheduler/live README, "Submitting jobs parked") instead
// of into caravan-queue.
var submitParked = os.Getenv("CARAVAN_SCALE_SUBMIT_PARKED") == "1"

// hcl renders the gang as a jobspec: one group per worker (Caravan's gang
// unit), each a caravan task with one GPU; queued jobs go to caravan-queue,
// or are submitted parked (submitParked).
func (g gang) hcl(queued bool) string {
	var b strings.Builder
	pool, meta, park := "default", fmt.Sprintf("    %q = %q\n", nodesim.DurationMeta, g.Duration.String()), ""
	switch {
	case queued && submitParked:
		meta += fmt.Sprintf("    %q = \"submitted\"\n", live.MetaParked)
		park = live.ParkConstraintHCL
	case queued:
		pool = "caravan-queue"
	}
	fmt.Fprintf(&b, "job %q {\n  type = \"batch\"\n  node_pool = %q\n", g.ID, pool)
	fmt.Fprintf(&b, "  meta = {\n%s  }\n%s", meta, park)
	if g.Never && !g.Oversize {
		b.WriteString(neverConstraint)
	}
	cpu := cpuPerGPU
	if g.Oversize {
		cpu = 16 * cpuPerGPU
	}
	for w := 0; w < g.Workers; w++ {
		fmt.Fprintf(&b, `  group "w%d" {
    reschedule {
      attempts  = 0
      unlimited = false
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "caravan"
      config {
        command = "/bin/true"
        gpus    = 1
      }
      resources {
        cpu    = %d
        memory = 256
      }
    }
  }
`, w, cpu)
	}
	b.WriteString("}\n")
	return b.String()
}
