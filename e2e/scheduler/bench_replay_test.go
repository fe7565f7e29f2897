package scheduler

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/caravan-dl/caravan/scheduler/sim"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// replayCompress is how many trace seconds one real second stands for
// (CARAVAN_REPLAY_COMPRESS overrides it, e.g. 10).
var replayCompress = 20.0

func init() {
	if v, err := strconv.ParseFloat(os.Getenv("CARAVAN_REPLAY_COMPRESS"), 64); err == nil && v > 0 {
		replayCompress = v
	}
}

// BenchmarkTraceReplay replays the Tiresias 60-job trace, time-compressed
// 20×, on a real cluster of 2 nodes × 8 simulated GPUs under FIFO and
// 2D-LAS, and reports the live mean JCT (in trace seconds) beside the
// simulator's prediction for the same cluster and policy. Every job runs
// sched_work.py for its compressed duration; preempted jobs checkpoint and
// resume, so live JCTs also pay Nomad's start and stop latencies.
//
// Those latencies are measured from the same run, from Nomad's own
// timestamps and never from the JCTs (see measureLatencies), and the
// simulator runs a third time with them as Config.StartLatency and
// StopLatency: *-err-% metrics are |sim − live| / live.
//
//	CARAVAN_E2E=1 go test -run '^$' -bench TraceReplay -benchtime 1x -timeout 60m ./e2e/scheduler/
func BenchmarkTraceReplay(b *testing.B) {
	dir, err := harness.SharedTraces()
	if err != nil {
		b.Fatal(err)
	}
	tr, err := trace.LoadTiresias(filepath.Join(dir, "tiresias", "60_job.csv"))
	if err != nil {
		b.Skip("no Tiresias trace:", err)
	}
	own, err := startCluster(2, 8)
	if err != nil {
		b.Fatal(err)
	}
	prev := cluster
	cluster = own
	defer func() { own.Stop(); cluster = prev }()
	for _, pol := range []string{"fifo", "tiresias-las"} {
		b.Run(pol, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				live, occupied, lat := replayLive(b, tr, pol, i, tiresiasLimits)
				predicted := replaySim(b, tr, pol, replay2x8, nil, latencies{})
				calibrated := replaySim(b, tr, pol, replay2x8, occupied, latencies{})
				withLat := replaySim(b, tr, pol, replay2x8, nil, lat)
				b.ReportMetric(live, "live-avg-jct-s")
				b.ReportMetric(predicted, "sim-avg-jct-s")
				b.ReportMetric(calibrated, "calibrated-sim-avg-jct-s")
				b.ReportMetric(live/predicted, "live/sim")
				b.ReportMetric(lat.start, "start-latency-s")
				b.ReportMetric(lat.stop, "stop-latency-s")
				b.ReportMetric(withLat, "latency-sim-avg-jct-s")
				b.ReportMetric(100*math.Abs(predicted-live)/live, "sim-err-%")
				b.ReportMetric(100*math.Abs(withLat-live)/live, "latency-sim-err-%")
			}
		})
	}
}

// replayLive submits the trace's jobs on the compressed clock and returns
// the mean JCT in trace seconds, and how long each job really occupied its
// GPUs (first allocation created to last task finished, trace seconds):
// the recorded duration plus Nomad's start and stop latencies.
func replayLive(b testing.TB, tr *trace.Trace, pol string, iter int, queueLimits []float64) (float64, map[string]float64, latencies) {
	limits := fmt.Sprintf("%g,%g", queueLimits[0]/replayCompress, queueLimits[1]/replayCompress)
	startScheduler(b, "-policy", pol, "-queue-limits", limits,
		"-quantum", time.Duration(float64(60*time.Second)/replayCompress).String(), "-log-level", "info")
	begin := time.Now()
	submitted := map[string]time.Time{}
	var ids []string
	for _, j := range tr.Jobs {
		at := begin.Add(time.Duration(j.Submit / replayCompress * float64(time.Second)))
		time.Sleep(time.Until(at))
		id := fmt.Sprintf("%s-%d-%s", strings.SplitN(pol, "-", 2)[0], iter, j.ID)
		submit(b, work{ID: id, Workers: j.GPUs, Seconds: j.Duration / replayCompress})
		submitted[id] = time.Now()
		ids = append(ids, id)
	}
	var jcts []float64
	occupied := map[string]float64{}
	preempted, stretch := 0, 0.0
	for k, id := range ids {
		waitDone(b, id, tr.Jobs[k].GPUs, 30*time.Minute)
		var end, created time.Time
		for _, a := range allocs(b, id) {
			if !completed(a) {
				continue
			}
			if a.TaskStates["work"].FinishedAt.After(end) {
				end = a.TaskStates["work"].FinishedAt
			}
			if c := time.Unix(0, a.CreateTime); created.IsZero() || c.Before(created) {
				created = c
			}
		}
		jcts = append(jcts, end.Sub(submitted[id]).Seconds()*replayCompress)
		occupied[tr.Jobs[k].ID] = end.Sub(created).Seconds() * replayCompress
		stretch += occupied[tr.Jobs[k].ID] / tr.Jobs[k].Duration
		n, _ := strconv.Atoi(jobInfo(b, id).Meta["caravan.preemptions"])
		preempted += n
	}
	b.Logf("%s live: %d jobs, %d preemptions, JCT %s (trace seconds); GPU occupancy %.2f× the recorded duration",
		pol, len(jcts), preempted, spread(jcts), stretch/float64(len(ids)))
	writeJCTs(b, pol, ids, jcts)
	return mean(jcts), occupied, measureLatencies(b, pol, ids, submitted)
}

// replayShape is the simulated cluster (nodes × GPUs) and the Tiresias
// queue limits (trace GPU·s) a replay is compared on.
type replayShape struct {
	nodes, gpus int
	limits      []float64
}

// tiresiasLimits are 2D-LAS's default queue limits (trace GPU·s).
var tiresiasLimits = []float64{3250, 7200}

// replay2x8 is the Tiresias replay's cluster; its simulator keeps the default queues.
var replay2x8 = replayShape{nodes: 2, gpus: 8}

// latencies are Nomad's per-start and per-stop overheads, trace seconds;
// unserved is the part of start before the job's tasks run (react +
// place), in which the live scheduler accrues it no service.
type latencies struct{ start, stop, unserved float64 }

// measureLatencies reads, from Nomad's timestamps of every allocation of
// the replay, what a start and a stop cost (medians, trace seconds):
//
//   - react: the scheduler's admission (SubmitTime of the job version that
//     pinned the allocation) minus what triggered it, the latest of the
//     job's submission and any allocation of the run becoming terminal
//     before then (first admissions only);
//   - place: admission to the task's StartedAt;
//   - process: the task's run time minus the work it reports done in it
//     (sched_work.py's "start done=" and "finished/checkpointed done="
//     lines): interpreter start, exit and sleep overshoot;
//   - stop: task FinishedAt to the allocation being terminal (ModifyTime,
//     when the client reports it complete and its GPU is free again); for
//     a preempted allocation, its Killing event to terminal.
//
// start = react + place + process; stop = stop. None of it looks at JCTs.
func measureLatencies(b testing.TB, pol string, ids []string, submitted map[string]time.Time) latencies {
	var react, place, process, stop []float64
	var terminals []time.Time
	type first struct {
		admit, submit time.Time
	}
	var firsts []first
	for _, id := range ids {
		var earliest time.Time
		for _, a := range allocs(b, id) {
			ts := a.TaskStates["work"]
			if ts == nil || ts.StartedAt.IsZero() || a.Job == nil || a.Job.SubmitTime == nil {
				continue
			}
			admit := time.Unix(0, *a.Job.SubmitTime)
			if earliest.IsZero() || admit.Before(earliest) {
				earliest = admit
			}
			place = append(place, ts.StartedAt.Sub(admit).Seconds())
			if !ts.FinishedAt.IsZero() {
				if out, err := cluster.Logs(a, "work", "stdout"); err == nil {
					if w, ok := worked(out); ok {
						process = append(process, ts.FinishedAt.Sub(ts.StartedAt).Seconds()-w)
					}
				}
			}
			if a.ClientStatus != "complete" && a.ClientStatus != "failed" {
				continue
			}
			end := time.Unix(0, a.ModifyTime)
			terminals = append(terminals, end)
			from := ts.FinishedAt
			if a.DesiredStatus != "run" {
				for _, ev := range ts.Events {
					if ev.Type == "Killing" {
						from = time.Unix(0, ev.Time)
						break
					}
				}
			}
			if !from.IsZero() {
				stop = append(stop, end.Sub(from).Seconds())
			}
		}
		if !earliest.IsZero() {
			firsts = append(firsts, first{earliest, submitted[id]})
		}
	}
	for _, f := range firsts {
		trigger := f.submit
		for _, t := range terminals {
			if t.After(trigger) && !t.After(f.admit) {
				trigger = t
			}
		}
		react = append(react, max(f.admit.Sub(trigger).Seconds(), 0))
	}
	m := func(xs []float64) float64 { return median(xs) * replayCompress }
	l := latencies{start: m(react) + m(place) + m(process), stop: m(stop), unserved: m(react) + m(place)}
	b.Logf("%s overheads (median, trace s; ×%g of real): react %.1f (n=%d) + place %.1f (n=%d) + process %.1f (n=%d) = start %.1f; stop %.1f (n=%d)",
		pol, replayCompress, m(react), len(react), m(place), len(place), m(process), len(process), l.start, l.stop, len(stop))
	return l
}

// worked is the work (seconds) one sched_work.py run reports doing.
func worked(stdout string) (float64, bool) {
	var from, to float64
	var okFrom, okTo bool
	for _, line := range strings.Split(stdout, "\n") {
		for _, f := range strings.Fields(line) {
			v, found := strings.CutPrefix(f, "done=")
			if !found {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			if strings.HasPrefix(line, "start ") {
				from, okFrom = x, true
			} else {
				to, okTo = x, true
			}
		}
	}
	return to - from, okFrom && okTo
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// replaySim runs the simulator on the same trace, cluster and policy. With
// occupied, each job's duration is what it really occupied live, which
// separates Nomad's per-job latencies from the scheduler's decisions.
// With lat, the simulator models those start and stop latencies instead.
func replaySim(b testing.TB, tr *trace.Trace, pol string, shape replayShape, occupied map[string]float64, lat latencies) float64 {
	c, err := sim.Homogeneous(shape.nodes, shape.gpus, 0)
	if err != nil {
		b.Fatal(err)
	}
	tjobs := append([]trace.Job(nil), tr.Jobs...)
	for i := range tjobs {
		if d, ok := occupied[tjobs[i].ID]; ok {
			tjobs[i].Duration = d
		}
	}
	jobs, err := sim.Build(tjobs, sim.WorkloadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	rc := registry.Config{}
	rc.SetQueueLimits(shape.limits)
	p, err := registry.New(pol, rc)
	if err != nil {
		b.Fatal(err)
	}
	res, err := sim.Run(sim.Config{Quantum: 60, StartLatency: lat.start, StopLatency: lat.stop, ServiceDelay: lat.unserved}, c, jobs, p)
	if err != nil {
		b.Fatal(err)
	}
	var jcts []float64
	for _, j := range res.Jobs {
		jcts = append(jcts, j.JCT)
	}
	b.Logf("%s simulated (calibrated=%v, start latency %.1f, stop latency %.1f): %d jobs, %d preemptions, JCT %s",
		pol, occupied != nil, lat.start, lat.stop, len(jcts), res.Metrics.Preemptions, spread(jcts))
	return res.Metrics.AvgJCT
}

// writeJCTs keeps the per-job live JCTs when CARAVAN_REPLAY_OUT names a folder.
func writeJCTs(b testing.TB, pol string, ids []string, jcts []float64) {
	dir := os.Getenv("CARAVAN_REPLAY_OUT")
	if dir == "" {
		return
	}
	var sb strings.Builder
	sb.WriteString("job,jct_trace_s\n")
	for i, id := range ids {
		fmt.Fprintf(&sb, "%s,%.1f\n", id, jcts[i])
	}
	if err := os.WriteFile(filepath.Join(dir, "replay-"+pol+".csv"), []byte(sb.String()), 0o644); err != nil {
		b.Log(err)
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(max(len(xs), 1))
}

func spread(xs []float64) string {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return "none"
	}
	return fmt.Sprintf("mean %.0f median %.0f p95 %.0f", mean(s), s[len(s)/2], s[len(s)*95/100])
}
