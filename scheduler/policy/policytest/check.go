package policytest

import (
	"fmt"
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Check verifies a Decision against its Snapshot: known jobs only, no job
// both preempted and started, preempted jobs were running, every start a
// complete gang (worker count within bounds), and after applying it no GPU
// holds more than its compute or memory; every queued job that did not
// start is explained, once. It returns the first violation.
func Check(s *policy.Snapshot, d policy.Decision) error {
	jobs := map[string]*policy.Job{}
	for _, j := range s.Jobs {
		jobs[j.ID] = j
	}
	type key struct {
		node string
		gpu  int
	}
	frac, mem, total := map[key]float64{}, map[key]int64{}, map[key]int64{}
	for _, n := range s.Cluster.Nodes {
		for _, g := range n.GPUs {
			k := key{n.Name, g.Index}
			frac[k], mem[k], total[k] = g.UsedFraction, g.UsedMemoryMiB, g.MemoryMiB
		}
	}
	release := func(p policy.Placement, sign float64) {
		for _, sl := range p.Slots {
			k := key{sl.Node, sl.GPU}
			frac[k] += sign * sl.Fraction
			mem[k] += int64(sign) * sl.MemMiB
		}
	}
	preempted := map[string]bool{}
	for _, id := range d.Preempts {
		j, ok := jobs[id]
		if !ok || j.State != policy.Running {
			return fmt.Errorf("preempts %s which is not running", id)
		}
		if preempted[id] {
			return fmt.Errorf("preempts %s twice", id)
		}
		preempted[id] = true
		release(j.Placement, -1)
	}
	waiting := make(map[string]string, len(d.Waiting))
	for _, w := range d.Waiting {
		if _, dup := waiting[w.JobID]; dup {
			return fmt.Errorf("job %s listed as waiting twice", w.JobID)
		}
		waiting[w.JobID] = w.Reason
	}
	started := map[string]bool{}
	for _, st := range d.Starts {
		j, ok := jobs[st.JobID]
		if !ok {
			return fmt.Errorf("starts unknown job %s", st.JobID)
		}
		if preempted[st.JobID] || started[st.JobID] {
			return fmt.Errorf("job %s preempted and restarted, or started twice", st.JobID)
		}
		started[st.JobID] = true
		if err := gangOK(j, st.Placement); err != nil {
			return err
		}
		if j.State == policy.Running {
			release(j.Placement, -1) // a resize replaces the old slots
		}
		release(st.Placement, +1)
		if _, waits := waiting[j.ID]; waits {
			return fmt.Errorf("job %s both started and waiting", j.ID)
		}
	}
	for k, f := range frac {
		if f > 1+1e-6 || mem[k] > total[k] {
			return fmt.Errorf("GPU %v over-allocated: fraction %.4f, memory %d/%d", k, f, mem[k], total[k])
		}
	}
	for _, j := range s.Jobs {
		if j.State == policy.Queued && !started[j.ID] && waiting[j.ID] == "" {
			return fmt.Errorf("queued job %s neither started nor explained", j.ID)
		}
	}
	return nil
}

func gangOK(j *policy.Job, p policy.Placement) error {
	lo, hi := j.Workers, j.Workers
	if j.MinWorkers > 0 {
		lo = j.MinWorkers
	}
	if j.MaxWorkers > 0 {
		hi = j.MaxWorkers
	}
	n := len(p.Slots)
	if n < lo || n > hi {
		return fmt.Errorf("job %s started with %d slots, gang needs %d..%d", j.ID, n, lo, hi)
	}
	f := j.Fraction
	if f == 0 {
		f = 1
	}
	for _, sl := range p.Slots {
		if math.Abs(sl.Fraction-f) > 1e-9 {
			return fmt.Errorf("job %s slot fraction %g, asked %g", j.ID, sl.Fraction, f)
		}
	}
	return nil
}
