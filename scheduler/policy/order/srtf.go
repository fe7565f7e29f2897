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
type SRTFOracle struct {
	sc scratch
	cr changeRanked
}

// NewSRTFOracle returns the SRTF oracle ordering.
func NewSRTFOracle() *SRTFOracle {
	o := &SRTFOracle{}
	o.sc.kc.mv = mover{
		aux: func(j *policy.Job) float64 { return j.OracleDuration },
		move: func(_ int, e *posKey, oracle, _, executed float64) bool {
			e.k[0] = remaining(oracle, executed)
			return true
		},
	}
	return o
}

// Name is "srtf-oracle".
func (*SRTFOracle) Name() string { return "srtf-oracle" }

// Preemptive is true: a shorter job preempts a longer one.
func (*SRTFOracle) Preemptive() bool { return true }

// Order ranks jobs by remaining time.
func (o *SRTFOracle) Order(s *policy.Snapshot) []policy.Ranked {
	key := func(j *policy.Job) keyed {
		_, ex := j.ServiceAt(s.Now)
		// running first on ties, so equal jobs never swap places
		return keyed{job: j, k: [3]float64{remaining(j.OracleDuration, ex), stateTie(j), queuedAt(j)}}
	}
	if out, ok := o.cr.rank(s, &o.sc, key); ok {
		return out
	}
	ks := o.sc.keysOf(s, key)
	// only running jobs' remaining time moves between events
	return o.sc.sortFor(ks, s.SubmitOrdered)
}

// remaining is a job's remaining time: its oracle duration less the time
// it executed, +Inf without one.
func remaining(oracle, executed policy.Seconds) policy.Seconds {
	if oracle > 0 {
		return max(0, oracle-executed) // the builtin: math.Max is a call on amd64, the same result
	}
	return math.Inf(1)
}

// stateTie ranks running jobs ahead of queued ones with the same key.
func stateTie(j *policy.Job) float64 {
	if j.State == policy.Running {
		return 0
	}
	return 1
}
