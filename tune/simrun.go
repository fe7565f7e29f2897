package tune

import (
	"fmt"
	"math"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// interference is the packing physics, the model the planner plans with.
var interference = profile.DefaultInterference()

// rates is each running trial's iterations per second: 1/step time on its
// workers, stretched by the interference factor of the GPU it shares.
func (s *sim) rates() map[string]float64 {
	type gk struct {
		n string
		g int
	}
	shared := map[gk][]float64{}
	for _, st := range s.active {
		if st.job.State == policy.Running && len(st.job.Placement.Slots) == 1 && st.job.Placement.Slots[0].Fraction < 1 {
			sl := st.job.Placement.Slots[0]
			shared[gk{sl.Node, sl.GPU}] = append(shared[gk{sl.Node, sl.GPU}], st.job.Util)
		}
	}
	out := map[string]float64{}
	for k, st := range s.active {
		if st.job.State != policy.Running {
			continue
		}
		slots := st.job.Placement.Slots
		t := st.w.StepTime(st.batch, len(slots))
		if len(slots) == 1 && slots[0].Fraction < 1 {
			t *= interference.Factor(shared[gk{slots[0].Node, slots[0].GPU}])
		}
		out[k] = 1 / t
	}
	return out
}

// advance runs time to the next trial end, reports it, and accounts
// GPU-hours.
func (s *sim) advance() error {
	rate := s.rates()
	if len(rate) == 0 {
		return fmt.Errorf("t=%.0f: trials wait but the policy runs none", s.now)
	}
	keys := make([]string, 0, len(rate))
	for k := range rate {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dt := math.Inf(1)
	for _, k := range keys {
		st := s.active[k]
		dt = min(dt, st.hold+(st.target-st.done)/rate[k])
	}
	s.res.GPUHours += float64(s.busyGPUs()) * dt / 3600
	s.now += dt
	for _, k := range keys {
		st := s.active[k]
		run := dt - st.hold
		st.hold = max(0, st.hold-dt)
		if run > 0 {
			it := min(run*rate[k], st.target-st.done)
			st.done += it
			s.res.Iterations += it
		}
		if st.done >= st.target-1e-6*max(1, st.target) {
			delete(s.active, k)
			m := st.w.Metric(st.batch, st.target*float64(st.batch))
			if err := st.tuner.Report(st.id, m); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sim) busyGPUs() int {
	type gk struct {
		n string
		g int
	}
	busy := map[gk]bool{}
	for _, st := range s.active {
		if st.job.State == policy.Running {
			for _, sl := range st.job.Placement.Slots {
				busy[gk{sl.Node, sl.GPU}] = true
			}
		}
	}
	return len(busy)
}
