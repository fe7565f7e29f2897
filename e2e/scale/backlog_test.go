package scale

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// A long standing queue (#20): CARAVAN_SCALE_BACKLOG=N submits N one-GPU
// gangs before the measured jobs, each with a constraint no node meets, so
// they stay queued the whole run while the measured jobs flow. Through
// caravan they park in caravan-queue, a pool without nodes: their blocked
// evaluations have no class eligibility, so every ended allocation
// unblocks all of them and each re-run reblocks. Straight to Nomad their
// blocked evaluations mark the nodes' class ineligible and stay put.
//
// CARAVAN_SCALE_BACKLOG_KIND=oversize makes the backlog ask twice a node's
// CPU instead: straight to Nomad that fails on resources, not on a
// constraint, so its blocked evaluations keep the nodes' class eligible
// and are re-run on every ended allocation like caravan's parked ones.
//
// CARAVAN_SCALE_VARIANTS="|-quantum 5s" runs caravan once per
// '|'-separated set of extra scheduler flags (here the first is empty:
// defaults), side by side in one run, after Nomad alone (unless
// MODES=caravan); the word submit-parked in a set submits that run's jobs
// parked instead of into caravan-queue. With a backlog and no variants,
// caravan runs once.
//
// Measured (scheduler/live/README.md, "A long queue (#20)"): parked
// evaluations re-run ~200–230 times per ended allocation at 1,000 parked
// jobs; reblocks are in memory (no Raft), the cost is worker time.

const variantsEnv = "CARAVAN_SCALE_VARIANTS"

// neverConstraint holds on no node (simulated nodes have no such meta),
// and caravan's eligibility check evaluates it as Nomad does.
const neverConstraint = "  constraint {\n    attribute = \"${meta.caravan_scale_backlog}\"\n    operator  = \"is_set\"\n  }\n"

var (
	backlog     []gang // submitted before the measured jobs, never placed
	variantArgs string // the scheduler flags of the caravan run under way
)

func backlogGangs(n int) []gang {
	out := make([]gang, n)
	oversize := os.Getenv("CARAVAN_SCALE_BACKLOG_KIND") == "oversize"
	for i := range out {
		out[i] = gang{ID: fmt.Sprintf("backlog-%05d", i), Workers: 1, Duration: time.Minute, Never: true, Oversize: oversize}
	}
	return out
}

// submitBacklog registers the backlog and waits until Nomad has blocked
// each one's evaluation, so the measured run starts with a standing queue.
func submitBacklog(b *testing.B, c *harness.Cluster, queued bool) {
	t0 := time.Now()
	submitOut(b, c, backlog, queued)
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
		n := blockedBacklog(c)
		if n >= len(backlog) || time.Now().After(deadline) {
			fmt.Printf("backlog: %d jobs submitted, %d blocked evaluations, in %s\n", len(backlog), n, time.Since(t0).Round(time.Second))
			break
		}
	}
	if queued {
		waitParked(c, t0)
	}
}

// waitParked waits until caravan has parked the whole backlog (park.go in
// scheduler/live: after -park-after, 100 a round), so the measured jobs
// meet a standing parked queue; it gives up when none is parked 30 s after
// the backlog was submitted (parking off: -park-after -1s).
func waitParked(c *harness.Cluster, t0 time.Time) {
	t1 := time.Now()
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(2 * time.Second) {
		n := parkedBacklog(c)
		if n >= len(backlog) || n == 0 && time.Since(t1) > 30*time.Second || time.Now().After(deadline) {
			fmt.Printf("backlog: %d of %d jobs parked %s after submitting began\n", n, len(backlog), time.Since(t0).Round(time.Second))
			return
		}
	}
}

func parkedBacklog(c *harness.Cluster) int {
	var stubs []struct {
		ID   string
		Meta map[string]string
	}
	if _, err := c.API.Raw().Query("/v1/jobs?meta=true&prefix=backlog-", &stubs, nil); err != nil {
		return 0
	}
	n := 0
	for _, s := range stubs {
		if s.Meta["caravan.parked"] != "" {
			n++
		}
	}
	return n
}

func blockedBacklog(c *harness.Cluster) int {
	evals, _, err := c.API.Evaluations().List(nil)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range evals {
		if e.Status == "blocked" && strings.HasPrefix(e.JobID, "backlog-") {
			n++
		}
	}
	return n
}

// backlogChurn is the server's reblocks and evaluations against the
// allocations that ended, read from its metrics after the run.
func backlogChurn(c *harness.Cluster) string {
	if len(backlog) == 0 {
		return ""
	}
	m, err := serverMetrics(c)
	if err != nil {
		return err.Error()
	}
	get := func(name string) float64 {
		for _, l := range strings.Split(m, "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == name {
				var v float64
				_, _ = fmt.Sscan(f[1], &v)
				return v
			}
		}
		return 0
	}
	ended := 0
	if stubs, _, err := c.API.Allocations().List(nil); err == nil {
		for _, a := range stubs {
			if a.ClientStatus == "complete" || a.ClientStatus == "failed" {
				ended++
			}
		}
	}
	reblocks := get("nomad_nomad_eval_reblock_count")
	return fmt.Sprintf("backlog %d: %.0f reblocks, %.0f evals dequeued, %d allocations ended, %.1f reblocks per ended allocation, %d backlog evals blocked at the end",
		len(backlog), reblocks, get("nomad_nomad_worker_dequeue_eval_count"), ended, reblocks/float64(max(ended, 1)), blockedBacklog(c))
}

// variant splits one variant into its scheduler flags and whether its
// jobs are submitted parked: the word submit-parked among the flags, or
// parked (CARAVAN_SCALE_SUBMIT_PARKED).
func variant(v string, parked bool) (string, bool) {
	var flags []string
	for _, f := range strings.Fields(v) {
		if f == "submit-parked" {
			parked = true
			continue
		}
		flags = append(flags, f)
	}
	return strings.Join(flags, " "), parked
}

// runVariants runs Nomad alone (unless MODES=caravan) and caravan once
// per flag set of CARAVAN_SCALE_VARIANTS, printing one row each.
func runVariants(b *testing.B, nodes int, gangs []gang, modes string) {
	var rows []string
	var direct result
	if modes != "caravan" {
		direct = runMode(b, nodes, gangs, false)
		rows = append(rows, direct.row("nomad directly"), "  "+direct.backlog)
	}
	if modes != "nomad" {
		parked := submitParked
		for _, v := range strings.Split(os.Getenv(variantsEnv), "|") {
			variantArgs, submitParked = variant(v, parked)
			r := runMode(b, nodes, gangs, true)
			label := "caravan " + strings.TrimSpace(v)
			rows = append(rows, r.row(label), "  "+r.backlog, fmt.Sprintf("  rounds: %s", r.rounds))
			if direct.jobs > 0 {
				rows = append(rows, fmt.Sprintf("  ratio to nomad: %.2f", r.jobsPerSec()/direct.jobsPerSec()))
			}
		}
		variantArgs, submitParked = "", parked
	}
	fmt.Printf("\n%d nodes × 8 GPUs, %d gang jobs (%d workers), backlog %d\n%s\n%s\n", nodes, len(gangs), workers(gangs),
		len(backlog), header, strings.Join(rows, "\n"))
}
