package sim

import (
	"fmt"
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// checkInvariants recomputes the ledger from running jobs and checks the
// rules every event must keep: no GPU over its fraction or memory, gangs
// all-or-nothing, service never shrinking, finished jobs gone.
func (e *engine) checkInvariants() error {
	type key struct {
		node string
		gpu  int
	}
	frac := map[key]float64{}
	mem := map[key]int64{}
	done := 0
	for _, j := range e.active {
		if j.done {
			if j.pj.State != policy.Finished || len(j.pj.Placement.Slots) > 0 {
				return fmt.Errorf("finished job %s still holds slots or is not marked finished", j.pj.ID)
			}
			done++
			continue
		}
		if err := e.checkGang(j); err != nil {
			return err
		}
		for _, s := range j.pj.Placement.Slots {
			frac[key{s.Node, s.GPU}] += s.Fraction
			mem[key{s.Node, s.GPU}] += s.MemMiB
		}
	}
	for i := 1; i < len(e.snapJobs); i++ { // what Snapshot.SubmitOrdered promises
		a, b := e.snapJobs[i-1], e.snapJobs[i]
		if a.Submit > b.Submit || (a.Submit == b.Submit && a.ID >= b.ID) {
			return fmt.Errorf("snapshot lists %s before %s, out of (Submit, ID) order", a.ID, b.ID)
		}
	}
	if done != e.doneIn {
		return fmt.Errorf("active list holds %d finished jobs, engine counts %d", done, e.doneIn)
	}
	for _, d := range e.drains {
		for _, s := range d.p.Slots {
			frac[key{s.Node, s.GPU}] += s.Fraction
			mem[key{s.Node, s.GPU}] += s.MemMiB
		}
	}
	for ni, n := range e.led.cluster.Nodes {
		for g, gpu := range n.GPUs {
			k := key{n.Name, g}
			if frac[k] > 1+1e-6 {
				return fmt.Errorf("GPU %s/%d holds %.4f > 1", n.Name, g, frac[k])
			}
			if gpu.MemoryMiB > 0 && mem[k] > gpu.MemoryMiB {
				return fmt.Errorf("GPU %s/%d holds %d MiB > %d", n.Name, g, mem[k], gpu.MemoryMiB)
			}
			if math.Abs(e.led.gpus[ni][g].frac-frac[k]) > 1e-6 {
				return fmt.Errorf("ledger for %s/%d says %.4f, jobs hold %.4f", n.Name, g, e.led.gpus[ni][g].frac, frac[k])
			}
		}
	}
	if err := e.checkShares(); err != nil {
		return err
	}
	return e.checkService()
}

func (e *engine) checkGang(j *simJob) error {
	n := len(j.pj.Placement.Slots)
	switch j.pj.State {
	case policy.Running:
		lo, hi := j.pj.Workers, j.pj.Workers
		if j.pj.MaxWorkers > 0 {
			lo, hi = max(1, j.pj.MinWorkers), j.pj.MaxWorkers
		}
		if n < lo || n > hi {
			return fmt.Errorf("running job %s holds %d slots, gang is %d..%d", j.pj.ID, n, lo, hi)
		}
	case policy.Queued:
		if n != 0 {
			return fmt.Errorf("queued job %s holds %d slots", j.pj.ID, n)
		}
	}
	return nil
}

// checkService verifies attained service and remaining work are monotone.
func (e *engine) checkService() error {
	if e.prevAttained == nil {
		e.prevAttained = map[string]float64{}
	}
	for _, j := range e.active {
		if j.done {
			continue
		}
		if prev, ok := e.prevAttained[j.pj.ID]; ok && j.pj.Attained < prev {
			return fmt.Errorf("job %s attained service fell from %v to %v", j.pj.ID, prev, j.pj.Attained)
		}
		e.prevAttained[j.pj.ID] = j.pj.Attained
		if j.remaining < 0 {
			return fmt.Errorf("job %s has negative remaining work %v", j.pj.ID, j.remaining)
		}
	}
	return nil
}
