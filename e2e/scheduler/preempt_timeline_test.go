package scheduler

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/caravan-dl/caravan/scheduler/sim"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// span is one run of a job on its GPUs, trace seconds from the replay's
// start: admitted (decision), started (task), stopped (kill or finish),
// freed (allocation terminal), and the work it reports doing.
type span struct {
	admit, start, stop, freed float64
	preempted                 bool
	work                      float64
}

func (s span) String() string {
	end := "done"
	if s.preempted {
		end = "preempted"
	}
	return fmt.Sprintf("[admit %.0f start %.0f %s %.0f freed %.0f work %.0f]", s.admit, s.start, end, s.stop, s.freed, s.work)
}

// liveSpans reads every run of a live job from Nomad's allocations.
func liveSpans(tb testing.TB, id string, begin time.Time) []span {
	tb.Helper()
	at := func(t time.Time) float64 { return t.Sub(begin).Seconds() * replayCompress }
	var out []span
	for _, a := range allocs(tb, id) {
		ts := a.TaskStates["work"]
		if ts == nil || ts.StartedAt.IsZero() {
			continue
		}
		s := span{start: at(ts.StartedAt), stop: at(ts.FinishedAt), freed: at(time.Unix(0, a.ModifyTime))}
		if a.Job != nil && a.Job.SubmitTime != nil {
			s.admit = at(time.Unix(0, *a.Job.SubmitTime))
		}
		if a.DesiredStatus != "run" {
			s.preempted = true
			for _, ev := range ts.Events {
				if ev.Type == "Killing" {
					s.stop = at(time.Unix(0, ev.Time))
					break
				}
			}
		}
		log, _ := cluster.Logs(a, "work", "stdout")
		if w, ok := worked(log); ok {
			s.work = w * replayCompress
		}
		if s.preempted && s.freed-s.stop > 100 {
			var evs []string
			for _, ev := range ts.Events {
				evs = append(evs, fmt.Sprintf("%.1f %s %s", at(time.Unix(0, ev.Time)), ev.Type, ev.DisplayMessage))
			}
			tb.Logf("%s alloc %s held its GPU %.0f trace s after the kill; events: %s; stdout: %q", id, a.ID[:8], s.freed-s.stop, strings.Join(evs, " | "), log)
		}
		out = append(out, s)
	}
	return out
}

// decisionLog wraps a policy to record when the simulator starts and
// preempts each job (Unwrap keeps its Waker visible to the simulator).
type decisionLog struct {
	policy.Policy
	events map[string][]string
}

func (d *decisionLog) Unwrap() policy.Policy { return d.Policy }

func (d *decisionLog) Decide(s *policy.Snapshot) policy.Decision {
	dec := d.Policy.Decide(s)
	for _, id := range dec.Preempts {
		d.events[id] = append(d.events[id], fmt.Sprintf("preempt %.0f", s.Now))
	}
	for _, st := range dec.Starts {
		d.events[st.JobID] = append(d.events[st.JobID], fmt.Sprintf("start %.0f", s.Now))
	}
	return dec
}

// logTimelines prints each job's live runs beside its simulated events.
func logTimelines(tb testing.TB, live map[string][]span, sim map[string][]string, simFinish map[string]float64) {
	var ids []string
	for id := range live {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s live:", id)
		for _, s := range live[id] {
			fmt.Fprintf(&b, " %s", s)
		}
		fmt.Fprintf(&b, "\n%s sim:  %s finish %.0f\n", id, strings.Join(sim[id], ", "), simFinish[id])
	}
	tb.Logf("per-job timelines (trace s):\n%s", b.String())
}

// simEvents runs the simulator with latencies lat, recording each job's
// starts and preemptions and its finish.
func simEvents(tb testing.TB, tr *trace.Trace, shape replayShape, lat latencies) (map[string][]string, map[string]float64) {
	tb.Helper()
	c, err := sim.Homogeneous(shape.nodes, shape.gpus, 0)
	if err != nil {
		tb.Fatal(err)
	}
	jobs, err := sim.Build(tr.Jobs, sim.WorkloadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	rc := registry.Config{}
	rc.SetQueueLimits(shape.limits)
	p, err := registry.New("tiresias-las", rc)
	if err != nil {
		tb.Fatal(err)
	}
	d := &decisionLog{Policy: p, events: map[string][]string{}}
	res, err := sim.Run(sim.Config{Quantum: 60, StartLatency: lat.start, StopLatency: lat.stop, ServiceDelay: lat.unserved}, c, jobs, d)
	if err != nil {
		tb.Fatal(err)
	}
	fin := map[string]float64{}
	for _, j := range res.Jobs {
		fin[j.ID] = j.Finish
	}
	return d.events, fin
}

// submittedAt is when a job was first submitted (its version 0), the
// replay's time 0 for the trace's first job; def if Nomad no longer
// keeps that version.
func submittedAt(tb testing.TB, id string, def time.Time) time.Time {
	tb.Helper()
	vs, _, _, err := cluster.API.Jobs().Versions(id, false, nil)
	if err != nil {
		tb.Logf("versions of %s: %v", id, err)
		return def
	}
	for _, v := range vs {
		if v.Version != nil && *v.Version == 0 && v.SubmitTime != nil {
			return time.Unix(0, *v.SubmitTime)
		}
	}
	return def
}
