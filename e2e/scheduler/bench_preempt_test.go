package scheduler

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/trace"
)

// preemptTrace is a small preemption-heavy trace (trace seconds): four
// long 1-GPU jobs fill the shared cluster's four GPUs, then short jobs and
// a 2-GPU gang arrive after the long ones have left 2D-LAS's first queue,
// so each arrival preempts a long job, which later resumes from its
// checkpoint.
func preemptTrace() *trace.Trace {
	tr := &trace.Trace{Name: "preempt-heavy"}
	add := func(id string, submit, dur float64, gpus int) {
		tr.Jobs = append(tr.Jobs, trace.Job{ID: id, Submit: submit, Duration: dur, GPUs: gpus, Fraction: 1})
	}
	for i := 0; i < 4; i++ {
		add(fmt.Sprintf("long%d", i), 0, 800, 1)
	}
	for i := 0; i < 6; i++ {
		add(fmt.Sprintf("short%d", i), 300+40*float64(i), 120, 1)
	}
	add("gang", 600, 200, 2)
	return tr
}

// preemptLimits are the queue limits (trace GPU·s) of both sides: a job
// leaves the first queue after 200 GPU·s.
var preemptLimits = []float64{200, 20000}

// BenchmarkPreemptionReplay replays preemptTrace under 2D-LAS on the
// shared 2 × 2-GPU dev cluster (compressed replayCompress×, ~1.5 min) and
// reports the live mean JCT beside the simulator's for the same cluster,
// queues and trace: plain, and with Nomad's start and stop latencies
// measured in the same run from Nomad's timestamps (never from JCTs).
//
//	CARAVAN_E2E=1 go test -run '^$' -bench PreemptionReplay -benchtime 1x ./e2e/scheduler/
func BenchmarkPreemptionReplay(b *testing.B) {
	useCluster(b)
	tr := preemptTrace()
	shape := replayShape{nodes: 2, gpus: 2, limits: preemptLimits}
	for i := 0; i < b.N; i++ {
		waitAllGPUsFree(b)
		live, _, lat := replayLive(b, tr, "tiresias-las", 100+i, preemptLimits)
		predicted := replaySim(b, tr, "tiresias-las", shape, nil, latencies{})
		withLat := replaySim(b, tr, "tiresias-las", shape, nil, lat)
		preempted := 0
		for _, j := range tr.Jobs {
			n, _ := strconv.Atoi(jobInfo(b, fmt.Sprintf("tiresias-%d-%s", 100+i, j.ID)).Meta["caravan.preemptions"])
			preempted += n
		}
		if preempted == 0 {
			b.Fatal("the preemption-heavy replay preempted nothing")
		}
		b.ReportMetric(float64(preempted), "live-preemptions")
		b.ReportMetric(live, "live-avg-jct-s")
		b.ReportMetric(predicted, "sim-avg-jct-s")
		b.ReportMetric(withLat, "latency-sim-avg-jct-s")
		b.ReportMetric(100*math.Abs(predicted-live)/live, "sim-err-%")
		b.ReportMetric(100*math.Abs(withLat-live)/live, "latency-sim-err-%")
	}
}
