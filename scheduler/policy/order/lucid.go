package order

import (
	"fmt"
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// LucidConfig tunes Lucid.
type LucidConfig struct {
	// ProfileTime is the length of a job's profiling run in seconds;
	// default 80, the authors' setting for the Philly trace in their
	// simulator (profiler_config: Philly 80 s, Venus/SenseTime 200 s).
	// Negative disables profiling (ablation).
	ProfileTime policy.Seconds
	// ProfileGPUs is the largest gang that is profiled; bigger jobs go
	// straight to the main phase. Default 4, the authors' Philly setting
	// (profiler scale 2 nodes × factor 2; Venus: 2 × 4 = 8).
	ProfileGPUs int
	// ProfileGrace is how long after its profiling window a job that kept
	// running may still be sent back to the queue; afterwards it is a
	// main-phase job and never preempted. Decisions happen at events and
	// scheduling quanta, so this should cover one quantum; default 60 s,
	// the simulator's quantum.
	ProfileGrace policy.Seconds
	// Estimate tunes the workload estimate model.
	Estimate LucidEstimateConfig
}

// Lucid is the ordering of Lucid (Hu et al., "Lucid: A Non-intrusive,
// Scalable and Interpretable Scheduler for Deep Learning Training Jobs",
// ASPLOS'23), checked against the authors' simulator
// (S-Lab-System-Group/Lucid, simulation/policy/lucid.py and
// profiler/lgf.py).
//
// Profiling phase. Lucid runs each new job of at most ProfileGPUs GPUs
// for a short profiling run (ProfileTime) before it joins the main queue;
// a job that ends within it is done (the debug jobs Lucid answers fast),
// the others leave profiling and queue by their estimate. The profiler
// serves least-GPU-first (then submission order). The paper profiles on a
// small dedicated cluster; an ordering cannot reserve GPUs, so here
// profiling shares the cluster: queued profiling jobs rank above every
// main-phase job (they start first on any freed GPUs), but never preempt
// a main-phase job. A job still running when its window ends becomes
// preemptable for ProfileGrace: if a higher-ranked job (another job to
// profile, or a main-phase job with a smaller estimate) needs its GPUs it
// goes back to the queue by its estimate — the one preemption Lucid makes;
// otherwise it simply continues, as if the main queue had started it at
// once. Keeping its progress is the simulator's checkpoint model; Lucid
// proper relaunches the job.
//
// Main phase. Non-preemptive: a main-phase running job is never a victim
// (CanPreempt). Queued jobs are ordered by estimated size
//
//	priority = predicted remaining duration × GPUs
//
// smallest first. The GPU weighting is the authors' (priority = estimate
// × gpu_num in lucid.py, as Helios' QSSF it builds on): it is shortest-
// GPU-time first, which for a non-preemptive scheduler favours jobs that
// free many GPUs soon. For a job that has run e seconds (profiled and
// sent back) the remaining duration is the median of the log-normal
// estimate conditioned on outliving e, minus e: for e = 0 it is the
// estimate, and it never goes to zero for jobs that outlive their
// estimate. The estimate is LucidEstimator's additive model (the paper's
// GA2M workload estimate model over user, GPU demand, model and, if
// asked, submission hour), learned online from finished jobs only
// (ObserveFinished); it never reads OracleDuration. Its fitted terms
// follow every refit; its "recent" term is read once when a job is first
// ranked (lucid.py, too, computes a job's priority once). Ties go to
// running jobs, then submission order. The framework backfills (the
// authors' Philly runs place past a blocked job).
//
// Not included: aging — the authors' simulator has none and we recall
// none in the paper, so long-estimated jobs can wait long; its affine-pair
// "indolent packing" and prescient adaptive sharing need per-job GPU
// utilisation and memory that whole-GPU traces do not carry (we do not
// invent them): packing is left to the placement plug-in
// (interference-aware packs by predicted utilisation); "lucid" uses
// consolidated placement. The profiler's elastic scaling of its
// dedicated cluster has no counterpart on a shared one.
type Lucid struct {
	cfg LucidConfig
	est *LucidEstimator
	// pred caches each active job's estimate at a model version; first
	// is its estimate when first ranked, scored when it finishes.
	pred  map[string]*lucidPred
	errs  errorLog
	calls int
	// now is the current Order call's Snapshot.Now (service is read at it)
	now policy.Seconds
	sc  scratch
	// slots and feats are what a tracked snapshot's keying read of the
	// job at each position (lucid_keys.go): its unchanged jobs are keyed
	// from them without being read, and without the ID and level maps
	// (100,000 map lookups were a third of a decision)
	slots []lucidSlot
	hot   []lucidHot // the slots' parts every call reads
	feats []lucidFeatures
	ids   lucidIDs
	kk    lucidKeying
	// shared counts entries that more than one slot holds (a job listed
	// twice under one ID): while it is 0, slots may be brought to the
	// model's version in parallel (lucid_par.go)
	shared int
	par    lucidPar
	// dropped lists the entries dropped since the last tracked call, so
	// that call refills just their slots (markDropped) instead of
	// reading every slot's entry to ask
	dropped []*lucidPred
	// byPos is an untracked snapshot's entries by position: the cheap
	// path where every job is read anyway
	byPos []*lucidPred
	// keyedAt is the model version the last tracked call's keys were
	// sized at (Prepare); prepares counts the Prepare calls that
	// re-ranked (tests)
	keyedAt  int
	prepares int
}

type lucidPred struct {
	// first what a tracked decision reads of every job's entry, in the
	// first 32 bytes: entries are 96 bytes, so these never straddle a
	// cache line
	version int     // model version main is at
	main    float64 // fitted terms of the ln estimate at version
	ctx     float64 // recent term, frozen when the job was first ranked
	gone    bool    // deleted from pred
	refs    int32   // slots holding it (fits gone's padding)
	id      string
	first   float64 // estimated duration when first ranked
	seen    int     // Order call that last ranked it
	slot    int32   // the slot that last took it (markDropped)
	// prepAt is 1 + the Order call after which Prepare brought it to its
	// version (featuresAt), 0 if none did
	prepAt int32
	// rem is remainingFrom(remIn...), the last remaining time computed
	// for an untracked snapshot (a tracked one keeps it in its slot)
	remIn [3]float64
	rem   float64
}

// NewLucid builds Lucid; the zero config gives the defaults above.
func NewLucid(cfg LucidConfig) (*Lucid, error) {
	if cfg.ProfileGPUs < 0 || cfg.ProfileGrace < 0 || math.IsNaN(cfg.ProfileTime) || math.IsNaN(cfg.ProfileGrace) {
		return nil, fmt.Errorf("lucid: profile GPUs and grace must be ≥ 0")
	}
	if cfg.ProfileTime == 0 {
		cfg.ProfileTime = 80
	}
	if cfg.ProfileGPUs == 0 {
		cfg.ProfileGPUs = 4
	}
	if cfg.ProfileGrace == 0 {
		cfg.ProfileGrace = 60
	}
	est, err := NewLucidEstimator(cfg.Estimate)
	if err != nil {
		return nil, err
	}
	l := &Lucid{cfg: cfg, est: est, pred: map[string]*lucidPred{}, ids: newLucidIDs()}
	l.sc.kc.mv = mover{aux: l.profileEnd, move: l.move, hold: l.hold}
	l.sc.keyInOrder = true // partKey keeps state: the keying pass splits around it
	// a refit moves every main-phase job's size (k[1]) and the ranking
	// is sorted in full: sizes rarely share their top 42 bits, so the
	// radix passes stop there and leave k[2] (a profiling job's queue
	// time) to the runs' comparisons, half the sort's time at 100,000
	// jobs (4.6 → 2.5 ms)
	l.sc.coarse, l.sc.coarseBits = 2, coarseTime
	// in a decision without reasons the jobs that are never victims
	// keep their keys across a refit (sizeKeys), so ~68 % of the keys
	// move: merged into the others' last order, the refit's sort took
	// 3.6 ms against 3.9 sorting them all (two runs of 34 refits)
	l.sc.movedMost = 7
	return l, nil
}

// Name is "lucid".
func (*Lucid) Name() string { return "lucid" }

// Preemptive is true, but only jobs at the end of their profiling run may
// be preempted (CanPreempt).
func (*Lucid) Preemptive() bool { return true }

// Estimator is the workload estimate model.
func (l *Lucid) Estimator() *LucidEstimator { return l.est }

// PredictionError is the estimator's error on the finished jobs it had
// ranked: each job's estimate when first ranked against its run time.
func (l *Lucid) PredictionError() EstimateError { return l.errs.summary() }

// lucidPhase is where a job is in Lucid's life cycle.
type lucidPhase int

const (
	profiling lucidPhase = iota // queued for, or inside, its profiling run
	profiled                    // running just past its window: may go back to the queue
	mainPhase                   // ordered by estimate, never preempted once running
)

// profiles reports whether j gets a profiling run.
func (l *Lucid) profiles(j *policy.Job) bool {
	return l.cfg.ProfileTime > 0 && j.Workers <= l.cfg.ProfileGPUs
}

// profilesNow reports whether j is still owed, or in, its profiling
// run: it gets one and was never preempted.
func (l *Lucid) profilesNow(j *policy.Job) bool { return l.profiles(j) && j.Preemptions == 0 }

// phase is j's phase at now.
func (l *Lucid) phase(j *policy.Job, now policy.Seconds) lucidPhase {
	if !l.profilesNow(j) {
		return mainPhase
	}
	_, ex := j.ServiceAt(now)
	if j.State == policy.Queued {
		if ex <= 0 {
			return profiling
		}
		return mainPhase
	}
	switch {
	case ex < l.cfg.ProfileTime:
		return profiling
	case ex < l.cfg.ProfileTime+l.cfg.ProfileGrace:
		return profiled
	}
	return mainPhase
}

// CanPreempt allows preempting only a job whose profiling run just ended.
func (l *Lucid) CanPreempt(j *policy.Job, now policy.Seconds) bool {
	return j.State == policy.Running && l.phase(j, now) == profiled
}

// GuardsConcurrently is true: CanPreempt reads only the job and the
// profiling settings (policy.ConcurrentGuard).
func (*Lucid) GuardsConcurrently() bool { return true }

// GuardUntil is CanPreempt and how long it holds for the unchanged job
// (policy.GuardHorizon): for good outside the profiling run (a job in
// its main phase, or one never profiled), else until executed time,
// which grows at most one second a second, reaches the end of the run
// or of its grace window.
func (l *Lucid) GuardUntil(j *policy.Job, now policy.Seconds) (bool, policy.Seconds) {
	ok := l.CanPreempt(j, now)
	if j.State != policy.Running || !l.profilesNow(j) || !j.Accrues() {
		return ok, math.Inf(1) // its phase moves only with a new stamp
	}
	_, ex := j.ServiceAt(now)
	switch end := l.cfg.ProfileTime; {
	case ex < end:
		return ok, horizon(now, end-ex)
	case ex < end+l.cfg.ProfileGrace:
		return ok, horizon(now, end+l.cfg.ProfileGrace-ex)
	}
	return ok, math.Inf(1)
}

// ObserveFinished scores the job's estimate and learns its run time.
func (l *Lucid) ObserveFinished(j *policy.Job) {
	if p, ok := l.pred[j.ID]; ok {
		l.errs.add(p.first, j.Executed)
		l.drop(p)
		delete(l.pred, j.ID)
	}
	l.est.Observe(j, j.Executed)
}

// predictLog is j's estimated ln duration: the model's fitted terms
// (following every refit) plus the recent term frozen at its arrival.
func (l *Lucid) predictLog(j *policy.Job) float64 { return l.predictFrom(l.entry(j), j) }

// entry is j's cached estimate, created (with its frozen terms) on first
// use.
func (l *Lucid) entry(j *policy.Job) *lucidPred {
	p := l.pred[j.ID]
	if p == nil {
		p = &lucidPred{id: j.ID, version: l.est.Version(), main: l.est.PredictMain(j), ctx: l.est.Context(j)}
		p.first = math.Exp(p.main + p.ctx)
		l.pred[j.ID] = p
	}
	return p
}

// predictFrom brings p, j's entry, to the model's version and returns
// the ln estimate. An entry Prepare brought since the last call is
// brought again, from j: Prepare read the features of the job listed at
// its slot then, and j's may have moved since (unprepare).
func (l *Lucid) predictFrom(p *lucidPred, j *policy.Job) float64 {
	if p.version != l.est.Version() || p.prepAt == int32(l.calls) {
		p.version, p.main, p.prepAt = l.est.Version(), l.est.PredictMain(j), 0
	}
	p.seen = l.calls
	return p.main + p.ctx
}

// Size is j's priority: predicted remaining duration × GPUs.
func (l *Lucid) Size(j *policy.Job) float64 { return l.sizeFrom(l.entry(j), j) }

// sizeFrom is Size of j through p, its entry.
func (l *Lucid) sizeFrom(p *lucidPred, j *policy.Job) float64 {
	_, ex := j.ServiceAt(l.now)
	in := [3]float64{l.predictFrom(p, j), l.est.Sigma(), ex}
	if p.remIn != in || p.rem == 0 { // bits differ only for NaN, which recomputes
		p.remIn, p.rem = in, remainingFrom(in[0], in[1], in[2])
	}
	return p.rem * gpuShare(j)
}

// Order ranks running profiling runs, then queued profiling runs (fewest
// GPUs first, then queue-join time), then every other job by estimated
// size (running first on ties).
//
// A tracked snapshot (Snapshot.JobGen) is keyed in two steps: what a
// key takes of the job alone is kept by position and re-read only for
// changed jobs (trackedKeys), and what depends on the model, which
// learns from every finish, is recomputed for every job from what its
// slot kept (modelKeys): no job is read for it. Lucid gives its
// positions (policy.RankIndexer) and says how long its guard's answer
// holds (GuardUntil): the Framework then reads only the changed jobs.
// Positions alone cost more than reading the jobs (churned 10k × 100k:
// 3–6 ms CPU more per decision), since the guard moved with Now and
// every running job was read again to ask it.
func (l *Lucid) Order(s *policy.Snapshot) []policy.Ranked {
	l.calls, l.now = l.calls+1, s.Now
	l.beginKeys(s)
	ks, tracked := l.sc.trackedKeys(s, l.partKey)
	if tracked {
		l.modelKeys(ks)
		l.keyedAt = l.kk.version
	} else {
		ks = l.sc.activeKeys(s, l.fullKey)
		l.dropped = l.dropped[:0] // the next tracked call refills every slot
	}
	l.endKeys()
	l.prune(ks, tracked)
	return l.sc.sortFor(ks, s.SubmitOrdered)
}

// prune forgets, now and then, cached estimates of jobs that left the
// snapshots without being reported finished.
func (l *Lucid) prune(ks []keyed, tracked bool) {
	if l.calls%1000 != 0 {
		return
	}
	if tracked {
		l.markSeen(ks)
	}
	for id, p := range l.pred {
		if p.seen < l.calls-1000 {
			l.drop(p)
			delete(l.pred, id)
		}
	}
}
