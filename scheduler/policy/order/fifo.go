package order

import "github.com/caravan-dl/caravan/scheduler/policy"

// FIFOConfig tunes the FIFO ordering.
type FIFOConfig struct {
	// Backfill lets smaller queued jobs start when the head does not fit.
	// Off by default: Tiresias' YARN-CS baseline (one_queue_fifo_sim_jobs)
	// stops at the first pending job that does not fit, i.e. strict
	// head-of-line blocking.
	Backfill bool
}

// FIFO is the YARN capacity-scheduler baseline of Tiresias: jobs start in
// submit order and are never preempted.
type FIFO struct {
	cfg FIFOConfig
	sc  scratch
	// tr ranks tracked snapshots by their changes; fast: the last
	// Order came from it
	tr    submitRanks
	fast  bool
	calls uint64 // Order calls (PrevRanks)
}

// NewFIFO returns a FIFO ordering.
func NewFIFO(cfg FIFOConfig) *FIFO { return &FIFO{cfg: cfg} }

// Name is "fifo".
func (*FIFO) Name() string { return "fifo" }

// Preemptive is false: YARN-CS never preempts.
func (*FIFO) Preemptive() bool { return false }

// BlocksHeadOfLine is true unless backfilling was asked for.
func (f *FIFO) BlocksHeadOfLine() bool { return !f.cfg.Backfill }

// Order ranks jobs by submit time. For a simulator's snapshot (listed in
// submit order, reasons skipped) the ranking may also hold the finished
// jobs the snapshot lists, which the Framework passes over: checking every
// job's state on every event of a replay with a queue of 10,000 jobs was
// most of FIFO's time, and the list barely changes between events.
func (o *FIFO) Order(s *policy.Snapshot) []policy.Ranked {
	o.fast = false
	o.calls++
	if s.SubmitOrdered && s.SkipReasons {
		o.sc.kc.forget() // it did not see this snapshot's stamps
		o.tr.forget()
		return o.sc.listedAll(s.Jobs)
	}
	if out, ok := o.tr.rank(s); ok {
		o.sc.kc.forget() // the general path did not see these stamps
		o.fast = true
		return out
	}
	// the key ignores service: no mover, so accruing jobs are not re-keyed
	key := func(j *policy.Job) keyed { return keyed{job: j, k: [3]float64{j.Submit}} }
	if ks, ok := o.sc.trackedKeys(s, key); ok { // unchanged jobs are not read
		return o.sc.sortFor(ks, false)
	}
	if s.SubmitOrdered {
		return o.sc.asListed(s.Jobs)
	}
	return o.sc.sortIncremental(o.sc.activeKeys(s, key), false)
}
