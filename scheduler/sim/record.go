package sim

import "github.com/caravan-dl/caravan/scheduler/policy"

// Sample is the cluster's state at one instant.
type Sample struct {
	T       float64 `json:"t"`
	Queued  int     `json:"queued"`
	Running int     `json:"running"`
	// AllocGPUs is the GPU share granted; BusyGPUs weights it by speed
	// (useful work: a spread or contended job wastes part of its GPUs).
	AllocGPUs float64 `json:"alloc_gpus"`
	BusyGPUs  float64 `json:"busy_gpus"`
}

// recorder keeps a bounded time series and exact integrals.
type recorder struct {
	every     float64
	last      float64
	series    []Sample
	allocArea float64 // ∫ allocated GPUs dt
	busyArea  float64 // ∫ speed-weighted GPUs dt
}

func newRecorder(samples int, horizon float64) *recorder {
	return &recorder{every: max(horizon, 1) / float64(samples), last: -1}
}

func (r *recorder) credit(alloc, busy float64) {
	r.allocArea += alloc
	r.busyArea += busy
}

// sample records the state after an event, at most once per interval.
func (r *recorder) sample(e *engine) {
	if r.last >= 0 && e.now < r.last+r.every {
		return
	}
	s := Sample{T: e.now}
	for _, j := range e.active {
		if j.done {
			continue
		}
		if j.pj.State == policy.Running {
			s.Running++
			s.AllocGPUs += j.gpus
			s.BusyGPUs += j.gpus * j.speed
		} else {
			s.Queued++
		}
	}
	r.last = e.now
	r.series = append(r.series, s)
}
