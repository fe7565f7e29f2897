package sim

import (
	"io"
	"sync/atomic"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// Config tunes a run. The zero value is usable: Defaults fills it.
type Config struct {
	// Quantum is the scheduling period in seconds (besides every arrival
	// and completion). Default 60.
	Quantum float64
	// IdleQuanta also runs quanta when no job is queued. Off by default:
	// with nothing waiting only elastic policies could act, and skipping
	// them keeps long replays fast.
	IdleQuanta bool
	// RestartPenalty is work (seconds) added each time a preempted job
	// resumes: the checkpoint reload and warm-up it redoes. Default 0, as
	// in the Tiresias reference simulator.
	RestartPenalty float64
	// StartLatency is wall time (seconds) after every start or resume of a
	// job (not an elastic resize) during which it holds its GPUs but makes
	// no progress: on a real cluster, admission, placement, task and process
	// start. It counts as attained service and executed time, as it does
	// live. Default 0 (starts are instant).
	StartLatency float64
	// ServiceDelay is the leading part of StartLatency (seconds, clamped to
	// [0, StartLatency]) before the job's tasks run: the scheduler's
	// reaction and Nomad's placement. The live scheduler accrues attained
	// service and executed time only once a job's tasks run, so during it
	// the job holds its GPUs but gains neither. Default 0: all of
	// StartLatency counts as service.
	ServiceDelay float64
	// StopLatency is wall time (seconds) a job's GPUs stay held after it
	// finishes or is preempted: the task being killed (checkpointing) or
	// exiting and the allocation becoming terminal. The job's JCT ends when
	// its work ends; a preempted job may be restarted elsewhere at once.
	// Held GPUs are busy in snapshots but cause no interference. Default 0.
	StopLatency float64
	// Interference slows co-located jobs (see profile.Interference).
	Interference profile.Interference
	// Pairs, if set, replaces Interference for two jobs sharing a GPU when
	// both have a measured type (Job.PairType), e.g. NewGavelPairs.
	Pairs PairSlowdowns
	// StuckQuanta is how many decisions on an idle cluster with no future
	// arrivals may start nothing before the waiting jobs are reported as
	// unplaceable. Default 3.
	StuckQuanta int
	// Samples bounds the time series length. Default 2000.
	Samples int
	// Check verifies invariants after every event (tests; costs time).
	Check bool
	// Progress, if set, receives a progress bar.
	Progress io.Writer
	// Done, if set, counts finished jobs (shared progress across runs).
	Done *atomic.Int64
}

// Defaults returns c with zero fields set to their defaults.
func (c Config) Defaults() Config {
	if c.Quantum <= 0 {
		c.Quantum = 60
	}
	if c.Interference == (profile.Interference{}) {
		c.Interference = profile.DefaultInterference()
	}
	c.StartLatency = max(c.StartLatency, 0)
	c.StopLatency = max(c.StopLatency, 0)
	c.ServiceDelay = min(max(c.ServiceDelay, 0), c.StartLatency)
	if c.StuckQuanta <= 0 {
		c.StuckQuanta = 3
	}
	if c.Samples <= 0 {
		c.Samples = 2000
	}
	return c
}
