// Package scale measures the live scheduler at cluster scale: a real Nomad
// server, hundreds of simulated Nomad clients with caravan GPUs in this
// process (internal/nodesim), and thousands of gang jobs, submitted once
// straight to Nomad and once through `caravan scheduler`, side by side.
//
//	CARAVAN_E2E=1 CARAVAN_SCALE_NODES=300 CARAVAN_SCALE_JOBS=3000 \
//	  go test -run '^$' -bench Scale -benchtime 1x -timeout 60m ./e2e/scale/
//
// It prints, per mode, jobs/s, submit→running p50/p99, Nomad server and
// scheduler CPU, the scheduler's RSS and its Nomad API calls and bytes
// (counted by a proxy), then the ratio of placement rates and the
// scheduler's own round latency (caravan_scheduler_round_seconds buckets)
// and API calls per round. caravan is built from this tree.
// CARAVAN_SCALE_MODES=nomad or =caravan runs one side only;
// CARAVAN_SCALE_PPROF=<dir> saves 30 s CPU profiles of the Nomad server,
// the simulated clients and the scheduler, taken during placement
// (CARAVAN_SCALE_PPROF_AFTER after the submission began, default 5 s);
// the scheduler's calls are also listed by endpoint, and its round time
// by stage. CARAVAN_SCALE_METRICS_INTERVAL and CARAVAN_SCALE_HEARTBEATS set
// the server's telemetry collection_interval and
// max_heartbeats_per_second (ready_test.go, nomadmetrics_test.go);
// CARAVAN_SCALE_NODE_AGENT=1 runs a system job on every node on both sides
// before submitting, as a real fleet's agents do (nodeagent_test.go says
// why an empty node costs the server).
//
// The jobs are submitted from a child process (submitter_test.go): the
// simulated clients keep this process's two Ps busy, and a loop here saw
// each HTTP call take ~0.1 s of Go run-queue wait (CARAVAN_SCALE_SUBMIT=
// inproc brings it back). For the same reason the counting proxy is off
// unless CARAVAN_SCALE_PROXY=on (then count calls, do not time rates).
// Each run prints the register and parse latencies seen by the submitter,
// its wake-up lag, and the server's Raft/FSM/register metrics.
//
// Measured on this shared 2-core machine (scheduler/live/README.md, "Round
// cost and admission rate at scale", has the table): 100 nodes, 200 jobs:
// caravan 11.2 jobs/s vs Nomad alone 11.5 (ratio 0.97), round p99 ≤ 2 s;
// 300 nodes, 1,000 jobs: 3.1 vs 10.9 (0.28), round p99 ≤ 33 s (the state
// Variable outgrew Nomad's 64 KiB limit). Since (same README, "Where the
// time went at 300 nodes"): 5.2 instead of 13.1 API calls per job, round
// p99 ≤ 8.2 s, submit→running p50 3.1 s, on a machine so loaded that the
// submitting loop itself ran at ~1 job/s.
//
// After each mode it reads every job's versions, evaluations and
// allocations back from Nomad and prints the time of each step (submitted
// → admitted → placing evaluation created → allocations created →
// running) and the evaluations per job (timeline_test.go). Caravan's jobs
// are submitted after the scheduler's first round (its start is printed
// on its own). CARAVAN_SCALE_DIR=/dev/shm keeps the cluster (the server's
// Raft log) in memory; CARAVAN_SCALE_SCHEDULERS=n sets num_schedulers
// (Nomad accepts at most the core count). At 1,000 nodes × 1,000 jobs the
// time is in Nomad's evaluation pipeline (scheduler/live/README.md,
// "Where the time goes at 1,000 nodes").
//
// It is a benchmark, not a test: `make test` runs nothing here.
package scale

import (
	"testing"

	"github.com/caravan-dl/caravan/e2e/harness"
)

func TestMain(m *testing.M) { harness.TestMain(m, func(m *testing.M) int { return m.Run() }) }
