package sim

import (
	"fmt"
	"math"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// finishObserver is implemented by policies that learn from finished jobs
// (e.g. Gittins priors); the simulator tells them once per job.
type finishObserver interface {
	ObserveFinished(j *policy.Job)
}

type engine struct {
	cfg     Config
	pol     policy.Policy
	led     *ledger
	perNode int
	jobs    []*simJob // arrival order
	byID    map[string]*simJob
	// active is queued + running jobs in (Submit, ID) order, plus finished
	// ones not yet compacted away (doneIn of them, see retire).
	active []*simJob
	doneIn int
	run    []*simJob // running, in start order
	drains []drain   // stopped jobs' GPUs still held (StopLatency)
	fresh  int       // drains[fresh:] were preempted in this decision
	next   int       // next arrival index
	now    float64
	lastQ  float64
	// waker, if the policy has one, says when time alone next changes its
	// mind; wake is that time (see Waker).
	waker  Waker
	wake   float64
	stuck  int
	events int
	// colocSeen are the pairs of jobs counted in Result.Colocations.
	colocSeen map[[2]*simJob]bool
	// ex is the policy's pair explorer (nil: none) and shares the pairs
	// sharing a GPU as it was told of them (see explore.go).
	ex     PairExplorer
	shares []*share
	res    *Result
	rec    *recorder
	bar    *Bar
	// scratch buffers
	shapeBuf, countBuf []int
	demandBuf          []float64
	snapJobs           []*policy.Job // parallel to active
	snapGen            []uint64      // snapJobs' stamps (jobgen.go)
	stamp              uint64
	dirty              []*simJob
	doneBuf            []*simJob
	prevAttained       map[string]float64
}

// Run replays jobs on cluster under pol and returns what happened. jobs
// need not be sorted; IDs must be unique.
func Run(cfg Config, cluster policy.Cluster, jobs []Job, pol policy.Policy) (*Result, error) {
	cfg = cfg.Defaults()
	if pol == nil {
		return nil, fmt.Errorf("no policy")
	}
	e := &engine{cfg: cfg, pol: pol, led: newLedger(cluster), perNode: maxPerNode(cluster), byID: map[string]*simJob{}, lastQ: math.Inf(-1),
		waker: WakerOf(pol), wake: math.Inf(1), ex: explorerOf(pol)}
	e.res = &Result{Policy: pol.Name(), TotalGPUs: TotalGPUs(cluster)}
	if e.res.TotalGPUs == 0 {
		return nil, fmt.Errorf("cluster has no GPUs")
	}
	if err := e.load(jobs); err != nil {
		return nil, err
	}
	e.rec = newRecorder(cfg.Samples, e.horizon())
	if cfg.Progress != nil {
		e.bar = NewBar(cfg.Progress, pol.Name(), len(e.jobs))
	}
	if err := e.loop(); err != nil {
		return nil, err
	}
	e.syncShares() // pairs parted by the last completions
	e.bar.Finish()
	e.finishResult()
	return e.res, nil
}

// load builds job state, setting aside jobs that can never fit.
func (e *engine) load(jobs []Job) error {
	sorted := make([]*Job, len(jobs))
	for i := range jobs {
		sorted[i] = &jobs[i]
	}
	// (Submit, ID) is the FIFO order every ordering ends its ties with, so
	// snapshots can promise it (Snapshot.SubmitOrdered).
	sort.Slice(sorted, func(a, b int) bool {
		if sorted[a].Submit != sorted[b].Submit {
			return sorted[a].Submit < sorted[b].Submit
		}
		return sorted[a].ID < sorted[b].ID
	})
	for _, sp := range sorted {
		if _, dup := e.byID[sp.ID]; dup {
			return fmt.Errorf("%s: duplicate job ID %q", sp.Source, sp.ID)
		}
		if sp.GPUs < 1 || sp.Work < 0 || math.IsNaN(sp.Work) || math.IsInf(sp.Work, 0) {
			return fmt.Errorf("%s: job %s: want ≥ 1 GPU and finite non-negative work, got %d GPUs, %v s", sp.Source, sp.ID, sp.GPUs, sp.Work)
		}
		j := newSimJob(sp)
		e.byID[sp.ID] = j
		if float64(sp.GPUs) > float64(e.res.TotalGPUs) {
			e.res.Unfit = append(e.res.Unfit, Unfit{ID: sp.ID, GPUs: sp.GPUs, Reason: fmt.Sprintf("needs %d GPUs, cluster has %d", sp.GPUs, e.res.TotalGPUs)})
			continue
		}
		j.pj.StepTimes = e.stepTimes(j)
		e.jobs = append(e.jobs, j)
	}
	return nil
}

func newSimJob(sp *Job) *simJob {
	j := &simJob{
		spec:      sp,
		remaining: sp.Work,
		pj: policy.Job{
			ID: sp.ID, User: sp.User, Model: sp.Model, Submit: sp.Submit, State: policy.Queued,
			Workers: sp.GPUs, Fraction: sp.Fraction, MemMiB: 0,
			MinWorkers: sp.MinWorkers, MaxWorkers: sp.MaxWorkers,
			OracleDuration: sp.Work, QueuedSince: sp.Submit, Util: sp.Util,
			Features: sp.Features,
		},
		nextMark: 0,
	}
	if sp.Speed != nil { // a nil *profile.Model must stay a nil interface
		j.pj.Speed = sp.Speed
	}
	return j
}

func (e *engine) horizon() float64 {
	if len(e.jobs) == 0 {
		return 1
	}
	return e.jobs[len(e.jobs)-1].spec.Submit
}

// loop is the event loop: advance to the next event, retire completions,
// admit arrivals, decide, repeat until every job is finished or reported.
func (e *engine) loop() error {
	for e.next < len(e.jobs) || e.live() > 0 {
		t, quantum := e.nextEventTime()
		if math.IsInf(t, 1) {
			return fmt.Errorf("t=%.0f: simulator stalled with %d active jobs", e.now, e.live())
		}
		e.advance(t)
		changed := e.retire()
		changed = e.undrain() || changed
		changed = e.admit() || changed
		changed = e.endProbes() || changed
		if e.cfg.Check { // a probe's window may end with no decision after it
			if err := e.checkShares(); err != nil {
				return fmt.Errorf("t=%.0f: invariant violated: %w", e.now, err)
			}
		}
		if (!changed && !quantum) || e.live() == 0 {
			continue
		}
		if err := e.decide(); err != nil {
			return err
		}
		if e.cfg.Check {
			if err := e.checkInvariants(); err != nil {
				return fmt.Errorf("t=%.0f: invariant violated: %w", e.now, err)
			}
		}
		e.rec.sample(e)
		e.bar.Update(len(e.res.Jobs))
	}
	return nil
}

// nextEventTime is the earliest arrival, completion or due quantum.
func (e *engine) nextEventTime() (float64, bool) {
	t := math.Inf(1)
	if e.next < len(e.jobs) {
		t = e.jobs[e.next].spec.Submit
	}
	for _, j := range e.running() {
		if j.speed > 0 {
			t = min(t, max(e.now, j.warmUntil)+j.remaining/j.speed)
		}
	}
	for _, d := range e.drains {
		t = min(t, d.until)
	}
	if e.ex != nil {
		t = min(t, e.nextProbeEnd())
	}
	if e.waker != nil && e.live() > 0 {
		if e.wake <= t {
			return e.wake, true // a timed event: decide even if nothing changed
		}
		if math.IsInf(t, 1) { // stuck: quanta let detectStuck report it
			return math.Floor(e.now/e.cfg.Quantum)*e.cfg.Quantum + e.cfg.Quantum, true
		}
	}
	if e.quantaActive() {
		q := math.Floor(e.now/e.cfg.Quantum)*e.cfg.Quantum + e.cfg.Quantum
		if q <= t {
			return q, true
		}
	}
	return max(t, e.now), false
}

// EventDriven is implemented by policies whose decisions can change only
// when jobs arrive or finish, never with the passage of time alone (FIFO,
// SRTF: a running job's remaining time only shrinks). The simulator skips
// quanta for them, which are pure overhead on long traces.
type EventDriven interface {
	EventDriven() bool
}

// quantaActive: quanta matter while something waits (or always, if asked),
// unless the policy says time alone never changes its mind.
func (e *engine) quantaActive() bool {
	if e.live() == 0 {
		return false
	}
	if ed, ok := e.pol.(EventDriven); ok && ed.EventDriven() {
		return false
	}
	if e.waker != nil {
		return false // it says when it needs waking
	}
	return e.cfg.IdleQuanta || e.live() > len(e.running())
}

// advance moves time to t, crediting progress and service.
func (e *engine) advance(t float64) {
	dt := t - e.now
	if dt > 0 {
		for _, j := range e.running() {
			// Progress only after the start latency; GPUs are held throughout.
			from := max(e.now, j.warmUntil)
			busy := max(t-from, 0)
			done := j.speed * busy
			if busy > 0 && (j.remaining-done <= 1e-7*max(1, j.spec.Work) || from+j.remaining/j.speed <= t) {
				done = j.remaining
			}
			j.remaining -= done
			served := dt
			if e.cfg.ServiceDelay > 0 { // no service before the tasks run
				served = max(t-max(e.now, j.warmUntil-e.cfg.StartLatency+e.cfg.ServiceDelay), 0)
			}
			j.pj.Executed += served
			j.pj.Attained += j.gpus * served
			e.rec.credit(j.gpus*dt, j.gpus*j.speed*busy)
			e.progress(j)
		}
	}
	e.now = t
}

// retire finishes every running job with no work left, exactly once.
func (e *engine) retire() bool {
	any := false
	done := e.doneBuf[:0]
	for _, j := range e.run {
		if j.remaining <= 0 && j.warmUntil <= e.now {
			done = append(done, j)
		}
	}
	e.doneBuf = done
	for _, j := range done {
		e.stop(j)
		j.pj.State = policy.Finished
		j.done, j.finish = true, e.now
		e.res.Jobs = append(e.res.Jobs, e.jobResult(j))
		if e.cfg.Done != nil {
			e.cfg.Done.Add(1)
		}
		if o, ok := e.pol.(finishObserver); ok {
			o.ObserveFinished(&j.pj)
		}
		e.doneIn++
		any = true
	}
	if p, ok := e.pol.(policy.Preparer); ok && any {
		p.Prepare() // what it learnt, re-ranked before the next decision
	}
	// Compacting is a pass over the whole queue, which on a congested
	// replay is tens of thousands of jobs; doing it per finish was a
	// seventh of a FIFO replay. Snapshots may hold finished jobs, so it
	// waits until they are an eighth of the list.
	if e.doneIn > 0 && e.doneIn*8 >= len(e.active) {
		e.compact()
	}
	return any
}

// live is the number of queued and running jobs.
func (e *engine) live() int { return len(e.active) - e.doneIn }

// undrain frees the GPUs of stopped jobs whose StopLatency has passed.
func (e *engine) undrain() bool {
	kept := e.drains[:0]
	for _, d := range e.drains {
		if d.until <= e.now {
			e.led.hold(d.p, -1)
			continue
		}
		kept = append(kept, d)
	}
	freed := len(kept) < len(e.drains)
	e.drains = kept
	return freed
}

// admit queues every job submitted by now.
func (e *engine) admit() bool {
	any := false
	for e.next < len(e.jobs) && e.jobs[e.next].spec.Submit <= e.now {
		j := e.jobs[e.next]
		e.active = append(e.active, j)
		e.listed(j)
		e.next++
		any = true
	}
	return any
}

// decide builds a snapshot, asks the policy and applies its decision.
func (e *engine) decide() error {
	e.events++
	// the engine never reads Waiting: policies may skip the reasons
	e.stampDirty()
	snap := &policy.Snapshot{Now: e.now, Cluster: e.led.snapshotCluster(), Jobs: e.snapJobs, SkipReasons: true, SubmitOrdered: true,
		JobGen: e.snapGen}
	snap.Cluster.Links = e.led.cluster.Links // a topology (nil: none)
	d := e.pol.Decide(snap)
	e.markRunning() // preempted ones change in apply
	started, err := e.apply(d)
	if err != nil {
		return err
	}
	e.markRunning() // started ones run from now on
	e.refreshSpeeds()
	if e.ex != nil {
		e.syncShares()
		e.ex.Settle()
	}
	e.lastQ = e.now
	e.setWake()
	e.detectStuck(started)
	return nil
}

// detectStuck reports queued jobs that an idle cluster with nothing more
// to arrive still cannot start, instead of looping on them forever.
func (e *engine) detectStuck(started int) {
	if started > 0 || len(e.running()) > 0 || len(e.drains) > 0 || e.next < len(e.jobs) {
		e.stuck = 0
		return
	}
	e.stuck++
	if e.stuck < e.cfg.StuckQuanta {
		return
	}
	for _, j := range e.active {
		if j.done {
			continue
		}
		e.res.Unfit = append(e.res.Unfit, Unfit{ID: j.pj.ID, GPUs: j.pj.Workers, Reason: fmt.Sprintf("policy %s never placed it on an idle cluster", e.pol.Name())})
		j.pj.State = policy.Finished
	}
	e.active, e.doneIn = e.active[:0], 0
	e.snapJobs, e.snapGen = e.snapJobs[:0], e.snapGen[:0]
}

// running lists running jobs (maintained by start and stop).
func (e *engine) running() []*simJob { return e.run }

// compact drops finished jobs from the active list.
func (e *engine) compact() {
	kept := e.active[:0]
	e.snapJobs, e.snapGen = e.snapJobs[:0], e.snapGen[:0]
	for _, j := range e.active {
		if !j.done {
			kept = append(kept, j)
			e.listed(j) // moved: a fresh stamp
		}
	}
	for i := len(kept); i < len(e.active); i++ {
		e.active[i] = nil
	}
	e.active, e.doneIn = kept, 0
}
