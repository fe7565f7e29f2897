package order

import (
	"fmt"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// GittinsConfig tunes 2D-Gittins.
type GittinsConfig struct {
	QueueConfig
	// Prior holds service samples (GPU-seconds) the distribution starts
	// from, e.g. Tiresias' yarn-gput1000.csv.
	Prior []float64
	// Delta is the service quantum Δ in GPU-seconds; default 3250, the
	// static gittins_delta of Tiresias' simulator.
	Delta float64
}

// queues validates cfg, fills Delta's default and builds its queues (both
// 2D-Gittins orderings take the same config).
func (cfg GittinsConfig) queues() (*queues, GittinsConfig, error) {
	q, err := newQueues(cfg.QueueConfig)
	if err != nil {
		return nil, cfg, err
	}
	if cfg.Delta < 0 {
		return nil, cfg, fmt.Errorf("gittins delta must be positive, got %g", cfg.Delta)
	}
	if cfg.Delta == 0 {
		cfg.Delta = 3250
	}
	return q, cfg, nil
}

// Gittins is Tiresias' 2D-Gittins: the same discretised queues as 2D-LAS,
// but inside a queue jobs are ranked by their Gittins index (highest
// first) over a service distribution that learns every finished job's
// GPU-time online.
//
// As in 2D-LAS, running jobs rank ahead of queued ones inside a queue, so
// a job is only preempted by a job of a higher queue. Discretising the
// priorities into queues is what keeps Tiresias from preempting on every
// change of a continuous priority, and the Gittins index of a running job
// changes every quantum as its attained service grows (it falls to 0 past
// the largest sample), so ranking it against queued jobs of its own queue
// made same-queue jobs preempt each other back and forth. The index still
// orders the queued jobs of a queue (which one starts next) and the
// running ones (which one a higher-queue job releases first).
type Gittins struct {
	q     *queues
	dist  *ServiceDist
	delta float64
	sc    scratch
	// lastSvc is the last listed call's service per job (listed order),
	// lastVer the distribution's insertion count then: an index is reused
	// while the job's service is the same and no sample above it was
	// added since (the index at a depends only on the samples above a).
	lastSvc []policy.Seconds
	lastVer int
	// nextSvc is the buffer this call's services are written to
	nextSvc []policy.Seconds
	// spans[k] is the index terms of job k of the last listed call (and
	// spare the buffer the next call fills): a running job's service
	// grows at every event, but its index terms change only when it
	// passes a sample, so they are looked up again only then.
	spans, spare []gittinsSpan
	// at is the same state by position for tracked calls (gittins_pos.go),
	// spanAt the terms, atValid that the last call was one
	at      []gittinsAt
	spanAt  []gittinsSpan
	atValid bool
	// ExactRunning ranks running jobs by their index in every call; by
	// default a tracked call without reasons leaves them loose
	// (gittins_loose.go). For comparisons.
	ExactRunning bool
	// deferred: the caller sorts the running jobs it reads
	// (DeferRunning); loose is that the last call left them loose,
	// fresh was its index at 0, and vs sorts them when asked
	deferred, loose bool
	fresh           float64
	vs              looseSort
	// cr ranks a loose call by changes (gittins_changes.go), with the
	// queues' mover; snap is that call's snapshot (SortRunning reads
	// it), pre a re-rank's map within it
	cr      changeRanked
	queueMv mover
	snap    *policy.Snapshot
	pre     []int32
}

// NewGittins builds 2D-Gittins.
func NewGittins(cfg GittinsConfig) (*Gittins, error) {
	q, cfg, err := cfg.queues()
	if err != nil {
		return nil, err
	}
	g := &Gittins{q: q, dist: NewServiceDist(cfg.Prior), delta: cfg.Delta}
	// the tracked key carries the service in k[1] (keyedJobs)
	g.sc.kc.mv = mover{move: func(_ int, e *posKey, _, attained, _ float64) bool { e.k[1] = attained; return true }}
	g.cr.t.final, g.queueMv = g.gittinsFinal, q.mover()
	return g, nil
}

// Name is "tiresias-gittins".
func (*Gittins) Name() string { return "tiresias-gittins" }

// Preemptive is true.
func (*Gittins) Preemptive() bool { return true }

// Queues is the number of priority queues.
func (g *Gittins) Queues() int { return g.q.Queues() }

// Samples is how many service samples the distribution holds.
func (g *Gittins) Samples() int { return g.dist.Len() }

// Index is the Gittins index at attained service a.
func (g *Gittins) Index(a policy.Seconds) float64 { return g.dist.Gittins(a, g.delta) }

// ObserveFinished learns a finished job's GPU-time.
func (g *Gittins) ObserveFinished(j *policy.Job) {
	v := j.Attained
	if v <= 0 {
		v = j.Executed * gpuShare(j)
	}
	g.dist.Add(v)
}

// keyedJobs lists the active jobs with their service (queues.update),
// each keyed with stateTie in k[0] and queuedAt in k[2], read in the same
// pass as the list (see activeKeys). For a tracked snapshot the service
// is each key's k[1] and the list nil.
func (o *Gittins) keyedJobs(s *policy.Snapshot) ([]keyed, []policy.Seconds) {
	tie := func(j *policy.Job) keyed { return keyed{job: j, k: [3]float64{stateTie(j), 0, queuedAt(j)}} }
	if o.q.plain() {
		// a tracked snapshot's unchanged jobs are keyed without reading
		// them: the key carries the service until Order replaces it
		ks, ok := o.sc.trackedKeys(s, func(j *policy.Job) keyed {
			a, _ := j.ServiceAt(s.Now)
			return keyed{job: j, k: [3]float64{stateTie(j), a, queuedAt(j)}}
		})
		if ok {
			return ks, nil // the service stays in k[1] (see indexes)
		}
		svc := o.q.svc[:0]
		ks = o.sc.activeKeys(s, func(j *policy.Job) keyed {
			a, _ := j.ServiceAt(s.Now)
			svc = append(svc, a)
			return tie(j)
		})
		o.q.svc = svc
		return ks, svc
	}
	js := o.sc.active(s)
	svc := o.q.update(s.Now, js)
	ks := o.sc.keys(len(js))
	for i, j := range js {
		ks[i] = tie(j)
	}
	return ks, svc
}

// Order ranks by queue, then running before queued, then Gittins index
// (highest first), then queue-join time.
func (o *Gittins) Order(s *policy.Snapshot) []policy.Ranked {
	if out, ok := o.orderByChanges(s); ok {
		return out
	}
	o.snap = nil
	// under churn every running job's index moves, so most calls sort in
	// full; queue-join times (k[2], the last key) rarely share top bits
	o.sc.coarse, o.sc.coarseBits = 3, coarseTime
	// the jobs whose index moved since the last call are running or
	// learnt a sample: their services, so their indexes, rarely tie
	// (the never-run ones, which share theirs, are sorted apart)
	o.sc.movedCoarse, o.sc.movedCoarseBits = 2, coarseRho
	// so they sort in fewer passes than all jobs, whose ties at index 0
	// need k[2]'s: a learned sample's ~60 % moved are merged in, not
	// sorted in full with the rest
	o.sc.movedMost = 7
	o.sc.split = true
	ks, svc := o.keyedJobs(s)
	// between consecutive events few keys change (running jobs'
	// indexes, starts, preemptions): re-rank only those, and reuse the
	// index of a job whose service and distribution are unchanged
	prev, matched := o.sc.matchFor(ks, s.SubmitOrdered)
	x := indexPass{ks: ks, svc: svc, prev: prev, newMax: o.dist.MaxAddedSince(o.lastVer),
		fresh: o.Index(0)} // most queued jobs have not run yet
	o.loose = svc == nil && s.SkipReasons && o.deferred && !o.ExactRunning
	x.loose = o.loose
	if svc == nil { // tracked: the state is kept by position
		o.at, o.spanAt = growKeep(o.at, len(s.Jobs)), growKeep(o.spanAt, len(s.Jobs))
		x.reuse = matched && o.atValid
		o.keyIndexes(&x, o.indexesAt)
		o.lastSvc, o.atValid = o.lastSvc[:0], true
	} else {
		x.reuse = matched && len(o.lastSvc) == len(o.sc.inc.keys)
		x.spans, x.next = grow(o.spare, len(ks)), grow(o.nextSvc, len(ks))
		o.keyIndexes(&x, o.indexes)
		o.spans, o.spare = x.spans, o.spans
		o.lastSvc, o.nextSvc, o.atValid = x.next, o.lastSvc, false
	}
	o.lastVer = o.dist.Added()
	fresh := x.fresh
	o.fresh = fresh
	// never-run queued jobs share their keys but for queue-join time:
	// a learned sample moves all of them, not their order (keyRun)
	o.sc.setRun(keyed{queue: int32(o.q.queueOf(0)), k: [3]float64{stateTie(&policy.Job{State: policy.Queued}), -fresh}})
	return o.sc.sortMatched(ks, prev, matched)
}

// indexPass is what Order's index loop reads and writes: each job's
// keys and span, from its service and its match with the last call.
type indexPass struct {
	ks []keyed
	// svc is each job's service, or nil where it is each key's k[1] (a
	// tracked call, indexesAt: spans and next are then unused); next
	// gets a copy, for the next call's reuse
	svc, next     []policy.Seconds
	spans         []gittinsSpan
	prev          []int32
	reuse         bool
	newMax, fresh float64
	// loose: running jobs are keyed loosely (gittins_loose.go)
	loose bool
}

// keyIndexes runs pass (indexes or indexesAt) over every key: each
// job's index is its own, so the keys are split across workers
// (parallel.go).
func (o *Gittins) keyIndexes(x *indexPass, pass func(x *indexPass, lo, hi int)) {
	if w := workers(len(x.ks)); w > 1 {
		forRanges(len(x.ks), w, func(_, lo, hi int) { pass(x, lo, hi) })
	} else {
		pass(x, 0, len(x.ks))
	}
}

// kept reports that what the last call kept of job i still describes
// it at service a: the job was listed then (and the last call's state is
// this path's), and no sample above a was added since (the index at a
// depends only on the samples above a).
func (x *indexPass) kept(i int, a float64) bool {
	return x.reuse && x.prev[i] >= 0 && x.newMax <= a
}

// termsIndex is the Gittins index at service a > 0 from the terms *sp,
// which are looked up again unless kept and still covering a (no sample
// lies between where they were taken and a: at every call since, the
// job's service was below a).
func (o *Gittins) termsIndex(a float64, sp *gittinsSpan, kept bool) float64 {
	if !kept || !sp.covers(a, o.delta) {
		*sp = o.dist.span(a, o.delta)
	}
	return sp.index(a, o.delta)
}

// indexes keys x.ks[lo:hi] of an untracked call (x.svc their services)
// by queue and Gittins index, reusing the last call's index or span of a
// job whose service allows it.
func (o *Gittins) indexes(x *indexPass, lo, hi int) {
	ks, svc, spans, p := x.ks, x.svc, x.spans, x.prev
	for i := lo; i < hi; i++ {
		a, idx := svc[i], x.fresh
		x.next[i] = a
		kept := x.kept(i, a)
		switch {
		case a == 0:
			spans[i] = gittinsSpan{a: -1} // covers nothing
		case kept && o.lastSvc[p[i]] == a:
			idx, spans[i] = -o.sc.inc.keys[p[i]].k[1], o.spans[p[i]]
		default:
			if kept {
				spans[i] = o.spans[p[i]]
			}
			idx = o.termsIndex(a, &spans[i], kept)
		}
		ks[i].queue, ks[i].k[1] = int32(o.q.queueOf(a)), -idx // in place (keyed.set)
	}
}
