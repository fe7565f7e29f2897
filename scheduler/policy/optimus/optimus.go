package optimus

import (
	"errors"
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Config tunes Optimus.
type Config struct {
	// MinRemaining is the remaining-time guess (s) for a job with no
	// progress, no target and no step budget; default 60.
	MinRemaining policy.Seconds
	// ResizeMinGain is the relative cut in a running job's estimated
	// remaining time needed before it is resized (each resize restarts
	// it from a checkpoint); default 0.1.
	ResizeMinGain float64
}

// Optimus allocates GPUs by marginal gain. Every round:
//  1. estimate each active job's remaining steps (fitted convergence to
//     TargetLoss, see estimateOf) and its step time against workers
//     (FitSpeed);
//  2. keep running jobs at least at their minimum gang and admit queued
//     jobs at their minimum, shortest estimated remaining GPU-time first,
//     while unallocated GPUs remain;
//  3. hand out the remaining GPUs one worker at a time to the elastic job
//     (MinWorkers < MaxWorkers) whose estimated completion time drops most
//     per GPU;
//  4. place: shrinks first, then admissions, then growths, each as a whole
//     gang through the placer; a running job's Start is its resize.
//
// It never preempts a job below its minimum gang.
//
// What it derives from each job is kept by snapshot position between
// decisions: on a tracked snapshot (Snapshot.JobGen) an unchanged job is
// not read again, and the admission order is merged from the last one.
// A running job is estimated only where its estimate is read (an elastic
// job's gain, damp). Curve and speed fits are cached while their inputs
// hold. None of this changes a decision (TestKeptStateChangesNoDecision).
type Optimus struct {
	cfg    Config
	place  policy.Placer
	curves map[string]*curveCache
	// cells find curves by snapshot position (cellAt).
	cells []curveCell
	// fitted counts the cached fits the current decision used (scratch,
	// reset by every Decide), so forget can tell no fit is stale.
	fitted int
	// free is the last decision's capacity, whose storage the next reuses.
	free *policy.Capacity
	buf  buffers
	// skipReasons: this decision's caller does not read Waiting texts.
	skipReasons bool
	// texts are the last Waiting texts by snapshot position (gainText).
	texts []waitText
	// track follows Snapshot.JobGen and ProgressGen (optimus fits progress
	// curves): an unchanged job's entry is reused.
	track policy.JobTrack
	// lim is the last decision's cluster limits (limOK: there was one).
	lim   policy.ClusterLimits
	limOK bool
	// tracked: this decision reuses unchanged jobs' entries
	tracked bool
	// admitSpan is the span of this decision's Starts that admit queued
	// jobs (apply): the rest resize running ones
	admitSpan [2]int
	queue     queue
	// waits is the storage of the last tracked decision's Waiting
	waits policy.Waits
	run   runs
	// admits are allocate's admitted records and apply's Wait runs
	// (admit_par.go)
	admits admitted
	// epoch counts collectPar's parallel estimates (curveCache.claim)
	epoch uint64
	// now is the current decision's Snapshot.Now (service is read at it)
	now policy.Seconds
}

// New builds Optimus placing gangs with p.
func New(cfg Config, p policy.Placer) (*Optimus, error) {
	if cfg.MinRemaining < 0 || cfg.ResizeMinGain < 0 {
		return nil, errors.New("optimus: MinRemaining and ResizeMinGain must be ≥ 0")
	}
	if cfg.MinRemaining == 0 {
		cfg.MinRemaining = 60
	}
	if cfg.ResizeMinGain == 0 {
		cfg.ResizeMinGain = 0.1
	}
	if p == nil {
		return nil, errors.New("optimus: nil placer")
	}
	return &Optimus{cfg: cfg, place: p, curves: map[string]*curveCache{}}, nil
}

// Name is "optimus+<placement>".
func (o *Optimus) Name() string { return "optimus+" + o.place.Name() }

// Decide runs one allocation round.
func (o *Optimus) Decide(s *policy.Snapshot) policy.Decision {
	if s == nil {
		return policy.Decision{}
	}
	dec := policy.Decision{}
	o.now = s.Now
	if o.skipReasons = s.SkipReasons; !o.skipReasons {
		if s.JobsTracked() { // Waiting is ours until the next Decide (Snapshot.JobGen)
			dec.Waiting = slices.Grow(o.waits[:0], len(s.Jobs))
		} else {
			dec.Waiting = make(policy.Waits, 0, len(s.Jobs))
		}
	}
	if so, ok := o.place.(policy.SnapshotObserver); ok {
		so.ObserveSnapshot(s)
	}
	o.fitted = 0
	o.free = o.free.Reset(&s.Cluster)
	o.free.LogChanges() // only Commit/Release change it: placers may keep fit memos across placements
	c := o.free
	jobs := o.collect(s, c.Limits(&s.Cluster), c.TotalGPUs(), &dec)
	queue := o.admissionOrder(o.tracked) // allocation and placement admit in the same order
	if t, ok := o.place.(policy.ResidentTracker); ok && t.TracksResidents() {
		c.TrackResidents(s.Jobs)
	}
	o.allocate(jobs, queue)
	o.apply(c, jobs, queue, &dec)
	policy.TrimStarts(&dec, s, func(i int) bool { return i >= o.admitSpan[0] && i < o.admitSpan[1] })
	o.forget(s)
	if len(o.texts) > len(s.Jobs) { // texts of positions gone: drop them
		clear(o.texts[len(s.Jobs):])
		o.texts = o.texts[:len(s.Jobs)]
	}
	if len(o.cells) > len(s.Jobs) {
		clear(o.cells[len(s.Jobs):])
		o.cells = o.cells[:len(s.Jobs)]
	}
	if s.JobsTracked() && dec.Waiting != nil {
		o.waits = dec.Waiting
	}
	return dec
}

// dropFit drops the cached fit of job id, listed at pos, which has
// finished: found through its cell alone, so this costs no hashing when
// there is none.
func (o *Optimus) dropFit(pos int, id string) {
	if pos >= len(o.cells) {
		return
	}
	if cl := o.cells[pos]; cl.c != nil && cl.id == id {
		if cl.c.n >= 0 { // alive: the map holds it
			cl.c.n = -1
			delete(o.curves, id)
		}
		o.cells[pos] = curveCell{}
	}
}

// forget drops cached fits of jobs no longer in the snapshot. If this
// decision used every cached fit (job IDs are unique), none is stale and
// the set of live IDs need not be built.
func (o *Optimus) forget(s *policy.Snapshot) {
	if o.fitted == len(o.curves) {
		return
	}
	live := make(map[string]bool, len(s.Jobs))
	for _, j := range s.Jobs {
		if j != nil {
			live[j.ID] = true
		}
	}
	for id, c := range o.curves {
		if !live[id] {
			c.n = -1 // dead: a cell still pointing here must not hit
			delete(o.curves, id)
		}
	}
}
