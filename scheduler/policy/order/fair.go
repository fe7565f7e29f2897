package order

import (
	"fmt"
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// FairConfig tunes finish-time fairness.
type FairConfig struct {
	// MinService is the remaining-time guess for a job that has not run
	// yet, in seconds; default 300.
	MinService policy.Seconds
	// Lease is how long a started job keeps its GPUs before it may be
	// preempted (Themis allocates in leases); default 600 s.
	Lease policy.Seconds
}

// Fair is Themis-style finish-time fairness: each job's
//
//	ρ = T_shared / T_isolated
//
// is estimated and the job with the largest ρ (worst treated) goes first.
// Without durations we use the heavy-tail guess "remaining = executed so
// far" (at least MinService):
//
//	T_shared   = (now − submit) + remaining
//	T_isolated = (executed + remaining) × max(1, N·g / G)
//
// where the isolated run has a 1/N share of the cluster's G GPUs (N active
// jobs), so a gang of g GPUs larger than G/N runs proportionally slower.
// Preemption honours the lease so allocations do not flap every round.
type Fair struct {
	cfg FairConfig
	sc  scratch
	// rr ranks a tracked snapshot (fair_ranks.go); fast: the last call
	// was ranked by it; calls counts Order calls (PrevRanks)
	rr    rhoRanks
	fast  bool
	calls uint64
}

// NewFair builds the fairness ordering.
func NewFair(cfg FairConfig) (*Fair, error) {
	if cfg.MinService < 0 || cfg.Lease < 0 {
		return nil, fmt.Errorf("fair: min service and lease must be ≥ 0")
	}
	if cfg.MinService == 0 {
		cfg.MinService = 300
	}
	if cfg.Lease == 0 {
		cfg.Lease = 600
	}
	f := &Fair{cfg: cfg}
	// ρ's tracked key keeps Executed in k[1] (Order)
	f.sc.kc.mv = mover{move: func(_ int, e *posKey, _, _, executed float64) bool { e.k[1] = executed; return true }}
	return f, nil
}

// Name is "fair".
func (*Fair) Name() string { return "fair" }

// Preemptive is true (after the lease).
func (*Fair) Preemptive() bool { return true }

// CanPreempt protects a job until its lease expires.
func (f *Fair) CanPreempt(j *policy.Job, now policy.Seconds) bool {
	return now-j.LastStart >= f.cfg.Lease
}

// Rho is the estimated finish-time fairness of j among n active jobs on a
// cluster of gpus GPUs.
func (f *Fair) Rho(j *policy.Job, now policy.Seconds, n int, gpus float64) float64 {
	shared, whole := f.rhoParts(j, now)
	return rhoOf(shared, whole, gpuShare(j), n, gpus)
}

// rhoParts are the parts of ρ that depend on j alone: its time shared
// (waited plus the remaining estimate) and its run time alone (executed
// plus the estimate).
func (f *Fair) rhoParts(j *policy.Job, now policy.Seconds) (shared, whole float64) {
	_, ex := j.ServiceAt(now)
	rem := max(ex, f.cfg.MinService)
	return max(0, now-j.Submit) + rem, ex + rem
}

// rhoOf combines rhoParts into ρ for a job of GPU share among n jobs.
func rhoOf(shared, whole, share float64, n int, gpus float64) float64 {
	slow := 1.0
	if gpus > 0 {
		slow = max(1, float64(n)*share/gpus)
	}
	return shared / (whole * slow)
}

// OrderIndexed is Order leaving a tracked snapshot's ranked jobs to the
// Framework (policy.IndexOrderer).
func (o *Fair) OrderIndexed(s *policy.Snapshot) ([]policy.Ranked, bool) {
	out := lazily(&o.rr.lazy, func() []policy.Ranked { return o.Order(s) })
	return out, o.fast
}

// Order ranks by ρ, largest first.
func (o *Fair) Order(s *policy.Snapshot) []policy.Ranked {
	// ρ (k[0]) rarely ties, and every call sorts in full (it moves with Now)
	o.sc.coarse, o.sc.coarseBits = 1, coarseRho
	o.sc.split, o.sc.allMove = true, true
	gpus := 0.0
	for _, n := range s.Cluster.Nodes {
		gpus += float64(len(n.GPUs))
	}
	o.calls++
	if out, ok := o.rr.rank(s, o.cfg.MinService, gpus); ok {
		o.fast = true
		o.sc.kc.forget() // the general path's keys missed these stamps
		return out
	}
	o.fast = false
	// ρ needs the number of active jobs: the one pass over the jobs (see
	// activeKeys) keeps ρ's parts, which are combined once the count is
	// known; a tracked snapshot keeps what ρ takes of each job (not Now),
	// and its keying pass combines them as it writes each part
	ks, tracked := o.sc.trackedKeysThen(s, func(j *policy.Job) keyed {
		_, ex := j.ServiceAt(s.Now)
		return keyed{job: j, queue: int32(stateTie(j)), k: [3]float64{j.Submit, ex, gpuShare(j)}}
	}, func(ks []keyed, n int) { o.rhoKeys(ks, n, s.Now, gpus) })
	if tracked {
		return o.sc.sortFor(ks, s.SubmitOrdered)
	}
	ks = o.sc.activeKeys(s, func(j *policy.Job) keyed {
		shared, whole := o.rhoParts(j, s.Now)
		return keyed{job: j, queue: int32(stateTie(j)), k: [3]float64{shared, whole, gpuShare(j)}}
	})
	for i := range ks {
		k := &ks[i]
		rhoKey(k, rhoOf(k.k[0], k.k[1], k.k[2], len(ks), gpus))
	}
	return o.sc.sortFor(ks, s.SubmitOrdered)
}

// rhoKeys turns the tracked keys ks (Submit, Executed and GPU share, the
// state in queue) into ρ's keys among n active jobs, bit for bit as
// rhoParts and rhoOf.
func (o *Fair) rhoKeys(ks []keyed, n int, now policy.Seconds, gpus float64) {
	for i := range ks {
		k := &ks[i]
		rem := max(k.k[1], o.cfg.MinService) // as rhoParts
		rhoKey(k, rhoOf(max(0, now-k.k[0])+rem, k.k[1]+rem, k.k[2], n, gpus))
	}
}

// rhoKey makes k ρ's key: −ρ first, then the state tie k kept in its
// queue, written in place (keyed.set says why).
func rhoKey(k *keyed, rho float64) {
	k.queue, k.k[0], k.k[1], k.k[2] = 0, -rho, float64(k.queue), 0
}

// GuardsConcurrently is true: CanPreempt reads only the job and the
// lease (policy.ConcurrentGuard).
func (*Fair) GuardsConcurrently() bool { return true }

// GuardUntil is CanPreempt and how long it holds for the unchanged job
// (policy.GuardHorizon): an expired lease stays expired, one running
// holds until it ends.
func (f *Fair) GuardUntil(j *policy.Job, now policy.Seconds) (bool, policy.Seconds) {
	if f.CanPreempt(j, now) {
		return true, math.Inf(1)
	}
	return false, horizon(now, j.LastStart+f.cfg.Lease-now)
}
