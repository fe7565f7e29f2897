package sim

import (
	"fmt"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// apply validates and applies one decision: preempts first, then starts.
// A decision that names unknown jobs, preempts a job that is not running,
// or over-allocates a GPU is a policy bug and stops the run.
func (e *engine) apply(d policy.Decision) (started int, err error) {
	e.fresh = len(e.drains)
	for _, id := range d.Preempts {
		j := e.byID[id]
		if j == nil || j.pj.State != policy.Running {
			return 0, fmt.Errorf("t=%.0f: policy %s preempted %q, which is not running", e.now, e.pol.Name(), id)
		}
		e.stop(j)
		j.pj.Preemptions++
		j.resumePenalty = true
	}
	seen := map[string]bool{}
	for _, st := range d.Starts {
		j := e.byID[st.JobID]
		if j == nil || j.pj.State == policy.Finished {
			return started, fmt.Errorf("t=%.0f: policy %s started %q, which is not an active job", e.now, e.pol.Name(), st.JobID)
		}
		if seen[st.JobID] {
			return started, fmt.Errorf("t=%.0f: policy %s started %q twice in one decision", e.now, e.pol.Name(), st.JobID)
		}
		seen[st.JobID] = true
		// The policy counts GPUs it just preempted as free; with a stop
		// latency the job it starts there waits for them to drain.
		ready := e.takeDrained(st.Placement)
		if err := e.start(j, st.Placement); err != nil {
			return started, fmt.Errorf("t=%.0f: policy %s: job %s: %w", e.now, e.pol.Name(), st.JobID, err)
		}
		if ready > e.now {
			j.warmUntil = max(j.warmUntil, ready+e.cfg.StartLatency)
		}
		started++
	}
	return started, nil
}

// takeDrained hands the starting placement p any slot on the same GPU held
// by a job preempted in this decision, and returns when the last of them
// would have drained (0 if none).
func (e *engine) takeDrained(p policy.Placement) float64 {
	ready := 0.0
	for i := e.fresh; i < len(e.drains); i++ {
		d := &e.drains[i]
		kept := d.p.Slots[:0:0]
		for _, hs := range d.p.Slots {
			taken := false
			for _, s := range p.Slots {
				if s.Node == hs.Node && s.GPU == hs.GPU {
					taken = true
					break
				}
			}
			if taken {
				e.led.hold(policy.Placement{Slots: []policy.Slot{hs}}, -1)
				ready = max(ready, d.until)
				continue
			}
			kept = append(kept, hs)
		}
		d.p.Slots = kept
	}
	return ready
}

// stop takes a running job off its GPUs and queues it.
func (e *engine) stop(j *simJob) {
	if j.pj.State == policy.Running {
		e.run = removeJob(e.run, j)
	}
	e.led.release(j, j.pj.Placement)
	if until := e.drainedAt(j); until > e.now && len(j.pj.Placement.Slots) > 0 {
		e.led.hold(j.pj.Placement, 1)
		e.drains = append(e.drains, drain{p: j.pj.Placement, until: until})
	}
	j.pj.Placement = policy.Placement{}
	j.pj.State = policy.Queued
	j.pj.QueuedSince = e.now
	j.gpus = 0
	j.speed = 0
}

// start places a queued job, or resizes a running one, all-or-nothing.
func (e *engine) start(j *simJob, p policy.Placement) error {
	old := j.pj.Placement
	if j.pj.State == policy.Running {
		e.led.release(j, old)
	}
	if err := e.validate(j, p); err != nil {
		if j.pj.State == policy.Running {
			e.led.commit(j, old)
		}
		return err
	}
	e.led.commit(j, p)
	j.pj.Placement = policy.Placement{Slots: append([]policy.Slot(nil), p.Slots...)}
	j.gpus = 0
	for _, s := range p.Slots {
		j.gpus += s.Fraction
	}
	j.slotNode = j.slotNode[:0]
	for _, s := range p.Slots {
		j.slotNode = append(j.slotNode, e.led.nodeIdx[s.Node])
	}
	j.pspeed = e.placementSpeed(j)
	if j.pj.State == policy.Running {
		return nil // a resize keeps its start time
	}
	j.pj.State = policy.Running
	e.run = append(e.run, j)
	j.pj.LastStart = e.now
	j.warmUntil = e.now + e.cfg.StartLatency
	if !j.started {
		j.started, j.firstStart = true, e.now
	}
	if j.resumePenalty {
		j.remaining += e.cfg.RestartPenalty
		j.resumePenalty = false
	}
	return nil
}

// validate checks a gang placement against the ledger without changing it.
func (e *engine) validate(j *simJob, p policy.Placement) error {
	n := len(p.Slots)
	lo, hi := j.pj.Workers, j.pj.Workers
	if j.pj.MaxWorkers > 0 {
		lo, hi = max(1, j.pj.MinWorkers), j.pj.MaxWorkers
	}
	if n < lo || n > hi {
		return fmt.Errorf("placement has %d slots, job needs %d..%d workers", n, lo, hi)
	}
	type key struct{ node, gpu int }
	addFrac := map[key]float64{}
	addMem := map[key]int64{}
	for _, s := range p.Slots {
		ni, ok := e.led.nodeIdx[s.Node]
		if !ok {
			return fmt.Errorf("slot on unknown node %q", s.Node)
		}
		if s.GPU < 0 || s.GPU >= len(e.led.gpus[ni]) {
			return fmt.Errorf("slot on node %s GPU %d, which has %d GPUs", s.Node, s.GPU, len(e.led.gpus[ni]))
		}
		if !(s.Fraction > 0 && s.Fraction <= 1+eps) || s.MemMiB < 0 {
			return fmt.Errorf("slot on %s/%d asks fraction %v, memory %d", s.Node, s.GPU, s.Fraction, s.MemMiB)
		}
		k := key{ni, s.GPU}
		addFrac[k] += s.Fraction
		addMem[k] += s.MemMiB
		st := &e.led.gpus[ni][s.GPU]
		if st.frac+addFrac[k] > 1+1e-6 {
			return fmt.Errorf("GPU %s/%d over-allocated: %.3f used + %.3f asked > 1", s.Node, s.GPU, st.frac, addFrac[k])
		}
		if capMem := e.led.cluster.Nodes[ni].GPUs[s.GPU].MemoryMiB; capMem > 0 && st.mem+addMem[k] > capMem {
			return fmt.Errorf("GPU %s/%d memory over-allocated: %d used + %d asked > %d MiB", s.Node, s.GPU, st.mem, addMem[k], capMem)
		}
	}
	return nil
}

// removeJob deletes j from list, keeping order (deterministic sums).
func removeJob(list []*simJob, j *simJob) []*simJob {
	for i, o := range list {
		if o == j {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	return list
}

// drainedAt is when a job stopped now frees its GPUs: StopLatency from
// now, or, stopped within its ServiceDelay, StopLatency after its tasks
// run: the live scheduler defers a preemption until then, since a task
// stopped while Nomad sets it up misses its kill signal.
func (e *engine) drainedAt(j *simJob) float64 {
	from := e.now
	if e.cfg.ServiceDelay > 0 {
		from = max(from, j.warmUntil-e.cfg.StartLatency+e.cfg.ServiceDelay)
	}
	return from + e.cfg.StopLatency
}
