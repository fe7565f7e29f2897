package policy

// Ranked is one active job in priority order, with what the ordering knows
// about where it stands.
type Ranked struct {
	Job *Job
	// Queue is the job's priority queue (0 = highest); orderings without
	// queues put every job in queue 0.
	Queue int
}

// RankIndexer is implemented by orderings that say where each job of
// their last Order result is listed in the snapshot: RankIndexes()[r] is
// 1 + the index in Snapshot.Jobs of the job ranked r (0 = not known), or
// the whole result is nil. With it the Framework takes what it kept of
// an unchanged job of a tracked snapshot (Snapshot.JobGen) instead of
// reading the job again, so a wrong index is the ordering's bug. A
// separate list rather than a field of Ranked: at 100,000 jobs a wider
// Ranked cost the untracked path a millisecond of memory traffic.
type RankIndexer interface {
	RankIndexes() []int32
}

// IndexOrderer is implemented by orderings that can leave reading each
// ranked job to the Framework: OrderIndexed is Order, except that where
// lazy is true the result's Job fields are nil and RankIndexes says
// where each job is listed (for every rank: a wrong index is the
// ordering's bug). At 100,000 jobs writing every rank's job is a random
// read of the snapshot's list a job, while a round reads few of them.
type IndexOrderer interface {
	RankIndexer
	OrderIndexed(s *Snapshot) (ranked []Ranked, lazy bool)
}

// PrevRanker is implemented by orderings that also say where each job
// of their last Order result stood in the one before it: PrevRanks()[r]
// is the rank, in the previous Order call's result, of the job ranked r
// now, or -1 where that job's stamp moved (Snapshot.JobGen) or it was
// not ranked then; nil where the ordering does not know. calls counts
// its Order calls, so the Framework uses the map only when the previous
// call was its own last round's. With it the Framework copies what it
// kept of an unchanged job by rank, in sequence, instead of through the
// job's position (RankIndexer), a cache miss per job at 100,000 jobs.
type PrevRanker interface {
	PrevRanks() (prev []int32, calls uint64)
}

// RunningSorter is implemented by orderings whose ranking, in a decision
// without reasons (Snapshot.SkipReasons), may list the running jobs of a
// queue out of their order among themselves. Inside a queue they rank
// ahead of its queued jobs, so their order there only says which one a
// trial preempts first; an ordering whose running jobs' keys move every
// call (2D-Gittins' indexes) then saves sorting them in every decision.
// The Framework sorts them only when a trial first reads them.
type RunningSorter interface {
	// DeferRunning tells the ordering that its caller sorts the running
	// jobs it reads (SortRunning): only then may it list them loosely.
	DeferRunning()
	// RunningLoose reports that the last Order call's ranking did.
	RunningLoose() bool
	// SortRunning reorders ranks, ranks of running jobs in that
	// ranking, whole queues of them in ascending order, into the order
	// an exact ranking lists them in.
	SortRunning(ranks []int)
}

// Orderer is the ordering extension point: it ranks the active (queued and
// running) jobs of a snapshot, highest priority first. It may keep state
// across calls (learned distributions, promotions) but must be deterministic.
type Orderer interface {
	Name() string
	// Preemptive orderings may stop running jobs for higher-ranked ones.
	Preemptive() bool
	// Order's result may be reused by its next call: use it, then drop it.
	Order(s *Snapshot) []Ranked
}

// Placer is the placement extension point: it chooses slots for a whole
// gang on the free capacity, or explains why it cannot. A placer must fail
// only when no placement it accepts exists, so a failure stays valid until
// capacity is released (the framework memoises failures by ShapeKey).
type Placer interface {
	Name() string
	Place(j *Job, d Demand, c *Capacity) (Placement, string)
	// Shape keys the memo of failed placements: two jobs with the same key
	// fit or fail together.
	Shape(j *Job, d Demand) ShapeKey
}

// ShapeKey identifies jobs a placer treats identically.
type ShapeKey struct {
	Workers  int
	Fraction float64
	MemMiB   int64
	Extra    float64
}

// DefaultShape is the ShapeKey of placers that look only at the demand.
func DefaultShape(d Demand) ShapeKey {
	return ShapeKey{Workers: d.Workers, Fraction: d.Fraction, MemMiB: d.MemMiB}
}

// UtilPredictor is implemented by placers that track GPU utilisation
// (interference-aware): the framework charges each slot this much Util.
type UtilPredictor interface {
	PredictUtil(j *Job) float64
}

// SnapshotObserver is implemented by plug-ins that learn online from each
// snapshot (observed utilisations, finished jobs).
type SnapshotObserver interface {
	ObserveSnapshot(s *Snapshot)
}

// BatchPlacer is implemented by placers with a batch mode (Liquid): the
// framework hands them a window of admissible queued jobs at once and they
// choose the order in which to pack them.
type BatchPlacer interface {
	Placer
	// BatchSize is how many queued jobs to group; ≤ 1 means immediate mode.
	BatchSize() int
	// PackOrder returns the indexes of jobs in the order to try placing them.
	PackOrder(jobs []*Job, demands []Demand) []int
}

// PreemptionGuard is implemented by orderings that protect some running
// jobs from preemption (e.g. a lease that has not expired).
type PreemptionGuard interface {
	CanPreempt(j *Job, now Seconds) bool
}

// ConcurrentGuard is implemented by PreemptionGuards whose CanPreempt may
// be called for different jobs from several goroutines at once: it reads
// only the job and the guard's fixed settings. The Framework then asks
// it inside the passes over the ranked jobs that it splits across cores
// at scale, where the job is read anyway, instead of once more per
// running job on the decision's goroutine (~40,000 at 10,000 nodes).
type ConcurrentGuard interface {
	PreemptionGuard
	GuardsConcurrently() bool
}

// GuardHorizon is implemented by ConcurrentGuards that can say how long
// their answer about an unchanged job holds: GuardUntil returns
// CanPreempt(j, now) and a time until which CanPreempt(j, t) gives the
// same answer for every t in [now, until), as long as the job does not
// change (Snapshot.JobGen; an accruing job's service moves with t as
// ServiceAt says). until may come early, never late. The Framework then
// asks about an unchanged running job of a tracked snapshot again only
// once Now reaches until, where it read every running job each round
// (~40,000 at 10,000 nodes) for a lease or a profiling window.
type GuardHorizon interface {
	ConcurrentGuard
	GuardUntil(j *Job, now Seconds) (ok bool, until Seconds)
}

// guardHorizon is g's GuardHorizon when it may be asked concurrently,
// else nil.
func guardHorizon(g PreemptionGuard) GuardHorizon {
	if h, ok := g.(GuardHorizon); ok && h.GuardsConcurrently() {
		return h
	}
	return nil
}

// concurrentGuard is g when it may be asked concurrently, else nil.
func concurrentGuard(g PreemptionGuard) PreemptionGuard {
	if cg, ok := g.(ConcurrentGuard); ok && cg.GuardsConcurrently() {
		return g
	}
	return nil
}

// DemandShaper is implemented by placers whose Shape is DefaultShape of
// the demand for every job. The Framework then keys every queued job's
// shape from its demand in a pass it splits across cores before the
// walk, and the walk visits only the jobs whose shape's memoised failure
// does not already decide them (walk_skip.go): at 100,000 queued jobs
// of tens of shapes, a few hundred visits instead of one per job.
type DemandShaper interface {
	ShapesByDemand() bool
}

// FinishObserver is implemented by policies that learn from finished jobs.
// The framework also feeds it jobs that appear in a snapshot as Finished.
type FinishObserver interface {
	ObserveFinished(j *Job)
}

// Preparer is implemented by policies that can do, between decisions,
// the work the next decision would do for what they learnt since the
// last one (ObserveFinished): after a model refit, re-sizing and
// re-sorting every queued job under the new model. Prepare changes no
// decision: the next Decide's result is the same with or without it; it
// only moves that work off the decision. A caller that feeds finished jobs
// as it learns of them (the simulator at each finish, the live scheduler
// after each round) calls Prepare after them. The Framework passes it on
// to its ordering (OrderPreparer).
type Preparer interface {
	Prepare()
}

// Idler is implemented by policies that ready memory between decisions:
// the Framework faults in the storage of its next giant gang's slots
// (Capacity.Idle) so that the decision meets no page fault there, and
// passes Idle on to an ordering that implements it (the orderings that
// rank by changes regrow their buffers for a creeping job count). The
// live scheduler calls Idle after every round, while it waits for the
// next; Idle changes no decision.
type Idler interface {
	Idle()
}

// IdleBetween calls p's Idle where it has one.
func IdleBetween(p Policy) {
	if i, ok := p.(Idler); ok {
		i.Idle()
	}
}

// OrderPreparer is an ordering's side of Preparer (the Framework calls
// it): Prepare reports whether it re-ranked the jobs of its last Order
// result. Their positions by the new rank are then its RankIndexes, and
// its next Order call re-ranks from that order. An ordering that is also
// a PrevRanker may say instead where each job stood before the re-rank
// (PrevRanks, counting the re-rank as an Order call): the Framework
// follows that map where it has one, else the positions.
type OrderPreparer interface {
	Prepare() bool
}
