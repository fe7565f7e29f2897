package order

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// SRTFOracle is shortest-remaining-time-first using each job's true
// duration (OracleDuration). It is an upper-bound baseline that no real
// scheduler can run, hence "oracle" in its name. Remaining time is
// OracleDuration − Executed in wall seconds (Tiresias' "shortest");
// jobs without an oracle duration rank last.
type SRTFOracle struct{ sc scratch }

// NewSRTFOracle returns the SRTF oracle ordering.
func NewSRTFOracle() *SRTFOracle { return &SRTFOracle{} }

// Name is "srtf-oracle".
func (*SRTFOracle) Name() string { return "srtf-oracle" }

// Preemptive is true: a shorter job preempts a longer one.
func (*SRTFOracle) Preemptive() bool { return true }

// Order ranks jobs by remaining time.
func (o *SRTFOracle) Order(s *policy.Snapshot) []policy.Ranked {
	ks := o.sc.keysOf(s, func(j *policy.Job) keyed {
		rem := math.Inf(1)
		if j.OracleDuration > 0 {
			rem = math.Max(0, j.OracleDuration-j.Executed)
		}
		// running first on ties, so equal jobs never swap places
		return keyed{job: j, k: [3]float64{rem, stateTie(j), queuedAt(j)}}
	})
	// only running jobs' remaining time moves between events
	return o.sc.sortFor(ks, s.SubmitOrdered)
}

// stateTie ranks running jobs ahead of queued ones with the same key.
func stateTie(j *policy.Job) float64 {
	if j.State == policy.Running {
		return 0
	}
	return 1
}
