package sim

import (
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// placementSpeed is how fast a running job makes progress relative to its
// recorded run (1 = consolidated, requested workers, alone on its GPUs):
//
//	speed = scaling(workers) / slowdown(shape)
//
// slowdown is StepTime(shape)/StepTime(consolidated) from the job's speed
// profile (GPUs per node of its slots; a worker is one GPU however small its
// fraction). scaling is the profile's throughput ratio when an elastic
// policy gives it another worker count (linear without a profile).
func (e *engine) placementSpeed(j *simJob) float64 {
	slots := j.pj.Placement.Slots
	want := j.spec.GPUs
	m := j.spec.Speed
	if m == nil || len(slots) <= 1 && want <= 1 {
		return float64(len(slots)) / float64(want)
	}
	shape := e.shapeOf(slots)
	ref := profile.Consolidated(want, e.perNode)
	if len(slots) == want {
		sp := m.StepTime(ref) / e.stepTime(m, shape, slots)
		if j.spec.NoSpeedup {
			sp = min(sp, 1)
		}
		return sp
	}
	return m.Throughput(shape) / m.Throughput(ref)
}

// shapeOf counts slots per node, in first-seen order.
func (e *engine) shapeOf(slots []policy.Slot) []int {
	idx := e.shapeBuf[:0]
	counts := e.countBuf[:0]
	for _, s := range slots {
		ni := e.led.nodeIdx[s.Node]
		found := false
		for k, n := range idx {
			if n == ni {
				counts[k]++
				found = true
				break
			}
		}
		if !found {
			idx = append(idx, ni)
			counts = append(counts, 1)
		}
	}
	e.shapeBuf, e.countBuf = idx, counts
	return counts
}

// interference is the worst co-location factor over the job's GPUs: a
// synchronous gang runs at its slowest worker's pace. A GPU shared by two
// jobs with measured types (Config.Pairs) uses their measured slowdown;
// otherwise the documented model (Config.Interference) applies.
func (e *engine) interference(j *simJob) float64 {
	worst := 1.0
	for i, s := range j.pj.Placement.Slots {
		st := &e.led.gpus[j.slotNode[i]][s.GPU]
		if len(st.jobs) < 2 {
			continue
		}
		if f, ok := e.pairFactor(j, st.jobs); ok {
			e.countColocation(st.jobs[0], st.jobs[1], true)
			worst = max(worst, f)
			continue
		}
		d := e.demandBuf[:0]
		for _, o := range st.jobs {
			d = append(d, o.spec.Util)
		}
		e.demandBuf = d
		if len(st.jobs) == 2 {
			e.countColocation(st.jobs[0], st.jobs[1], false)
		}
		worst = max(worst, e.cfg.Interference.Factor(d))
	}
	return worst
}

// refreshSpeeds recomputes running jobs' speeds after a change: the
// placement part is cached from start; co-location can change any time.
func (e *engine) refreshSpeeds() {
	for _, j := range e.run {
		j.speed = j.pspeed / e.interference(j)
	}
}
