package policy

import parts "github.com/caravan-dl/caravan/internal/split"

// Framework combines an Orderer and a Placer into a Policy: it walks the
// active jobs in priority order, places each queued gang all-or-nothing,
// and, for preemptive orderings, preempts lower-ranked running jobs when
// (and only when) that makes a higher-ranked gang fit.
type Framework struct {
	Order Orderer
	Place Placer
	// EagerTrials makes every preemption trial release each victim in
	// the Capacity, as before lazy trials (preempt_lazy.go): the same
	// decisions, for benchmarks and tests that compare the two.
	EagerTrials bool
	// seen dedupes finished jobs fed to learners.
	seen map[string]bool
	// free is the last round's capacity, whose storage the next reuses.
	free *Capacity
	// hol caches head-of-line Waiting texts by position (see holText).
	hol []string
	// holTail is waitBehind's scratch (walk_hol.go)
	holTail holTail
	// held and preempted are the last round's victim index, whose storage
	// the next reuses (a replay decides ~200,000 times over ~1,000 jobs).
	held      fenwick
	preempted []bool
	running   []int
	// victimParts is findVictims' per-part scratch
	victimParts [][]int
	skip        []int32 // live's links, by position in running
	info        []rankInfo
	// guarded is rankAll's plain pass's ConcurrentGuard answers, by rank
	guarded []bool
	// loads and nodes are roundTrips' storage (preempt_exact.go)
	loads []gpuLoad
	nodes nodeMarks
	// refs, refCache and refRound are victimRefs' storage (preempt_refs.go)
	refs     []refSlot
	refCache map[*Job]*victimRef
	refRound uint64
	// refsKept counts the victims whose entry victimRefs kept by their
	// stamps, without comparing slots (tests)
	refsKept int
	// leftJobs: the last round's ordering left its ranked jobs to it
	// (IndexOrderer; tests)
	leftJobs bool
	// lazy is tryVictims' scratch for lazy releases (preempt_lazy.go)
	lazy lazyTrial
	// jobs is what was read of a tracked snapshot's jobs (jobcache.go)
	jobs jobCache
	// learnt follows the stamps of the jobs learn has looked at
	learnt JobTrack
	// finished is learn's finished jobs by part (scratch)
	finished [][]int32
	// skips is the skipping walk's index of queued jobs by shape
	// (walk_skip.go), whose storage the next round reuses
	skips skipIndex
	// stats counts the last Decide's preemption trials (trial_stats.go);
	// lazyMat0 is the lazy trials' materialised count when it began
	stats    TrialStats
	lazyMat0 int64
	// failedBig is the jobs whose big trials failed (preempt_bound.go)
	failedBig bigFailures
}

// victimBuffers returns a zeroed victim index, preempted flags for n
// ranked jobs and an empty list of running ranks, reusing the last
// round's storage.
func (f *Framework) victimBuffers(n int) (*fenwick, []bool, []int) {
	// grown with room: a queue that grows by a few jobs a round
	// reallocated ~1 MB every round, fresh pages faulted in each time
	f.held.t, f.preempted = grow(f.held.t, n+1), grow(f.preempted, n)
	clear(f.held.t)
	clear(f.preempted)
	return &f.held, f.preempted, f.running[:0]
}

// capacity is the free capacity of c for a new round.
func (f *Framework) capacity(c *Cluster) *Capacity {
	f.free = f.free.Reset(c)
	f.free.LogChanges()
	return f.free
}

// NewFramework combines an ordering with a placement.
func NewFramework(o Orderer, p Placer) *Framework {
	return &Framework{Order: o, Place: p, seen: map[string]bool{}}
}

// Name is "<ordering>+<placement>".
func (f *Framework) Name() string { return f.Order.Name() + "+" + f.Place.Name() }

// HeadOfLineBlocker is implemented by orderings that stop at the first
// queued job that does not fit instead of backfilling smaller ones.
type HeadOfLineBlocker interface {
	BlocksHeadOfLine() bool
}

// Decide runs one scheduling round.
func (f *Framework) Decide(s *Snapshot) Decision {
	if s == nil {
		return Decision{}
	}
	if splitParts(len(s.Jobs)) > 1 {
		// a decision this large makes dozens of split passes: keep the
		// helpers running between them (internal/split's Hold)
		defer parts.Hold()()
	}
	f.learn(s)
	f.stats, f.lazyMat0 = TrialStats{}, f.lazy.materialised
	r, ranked := f.roundAndOrder(s)
	if r.reads {
		r.rankAll(ranked)
	}
	r.walk(ranked)
	f.loads = r.loads // storage for the next round
	if r.tracked {
		f.jobs.waiting = r.dec.Waiting // storage for the next round
	}
	f.leftJobs = r.lazyAt != nil
	return r.dec
}

// roundAndOrder starts the round (newRound: the capacity's Reset re-reads
// thousands of nodes under churn, the job cache compares every stamp) and
// asks the ordering for its ranking. At scale the two run side by side:
// they share nothing they write (the round writes the Framework's
// capacity and job cache, the ordering its own state; both only read the
// snapshot), so the result is the serial one.
func (f *Framework) roundAndOrder(s *Snapshot) (*round, []Ranked) {
	q := f.roundPlugins()
	if rs, ok := f.Order.(RunningSorter); ok {
		rs.DeferRunning() // the round sorts what its trials read (preempt_loose.go)
	}
	if splitParts(len(s.Jobs)) < 2 && splitPartsOf(len(s.Cluster.Nodes), rereadMin) < 2 {
		r := newRound(f, s, q)
		ranked, lazyAt := f.order(s)
		r.lazyAt = lazyAt
		return r, ranked
	}
	// two parts of one split pass: the caller orders, and a helper starts
	// the round, or the caller after Order where the OS has not run one
	// by then (a pass's helpers are held around a decision at scale, so
	// one is usually running; a goroutine of its own waited for the held
	// helper to yield its processor, which it does only to itself)
	var r *round
	var ranked []Ranked
	var lazyAt []int32
	split(2, 2, func(part, _, _ int) {
		if part == 0 {
			ranked, lazyAt = f.order(s)
		} else {
			r = newRound(f, s, q)
		}
	})
	r.lazyAt = lazyAt
	return r, ranked
}

// order asks the ordering for its ranking, and where it left the jobs to
// the Framework (IndexOrderer) their indexes in s.Jobs.
func (f *Framework) order(s *Snapshot) ([]Ranked, []int32) {
	io, ok := f.Order.(IndexOrderer)
	if !ok {
		return f.Order.Order(s), nil
	}
	ranked, lazy := io.OrderIndexed(s)
	if !lazy {
		return ranked, nil
	}
	return ranked, io.RankIndexes()
}

// ObserveFinished forwards a finished job to every plug-in that learns.
func (f *Framework) ObserveFinished(j *Job) {
	if j == nil || f.seen[j.ID] {
		return
	}
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	f.seen[j.ID] = true
	for _, p := range []any{f.Order, f.Place} {
		if o, ok := p.(FinishObserver); ok {
			o.ObserveFinished(j)
		}
	}
}

// LearnBetween feeds p the finished jobs fin (FinishObserver) and lets it
// prepare its next decision (Preparer): what a caller that learns of
// finished jobs as they finish does between two decisions.
func LearnBetween(p Policy, fin []*Job) {
	if o, ok := p.(FinishObserver); ok {
		for _, j := range fin {
			o.ObserveFinished(j)
		}
	}
	if pr, ok := p.(Preparer); ok {
		pr.Prepare()
	}
}

// Prepare lets the ordering bring up to date, between decisions, what
// it derives from what it learnt (Preparer). Where it re-ranks, what the
// Framework kept of the last round by rank follows it (jobCache.permute),
// so the next round copies it in sequence: after lucid's refit ~80,000
// ranks moved, and copying them at random cost the next round ~1 ms.
func (f *Framework) Prepare() {
	o, ok := f.Order.(OrderPreparer)
	if !ok {
		return
	}
	if splitParts(f.jobs.ranked) > 1 { // a re-rank at scale: passes as a decision's
		defer parts.Hold()()
	}
	if !o.Prepare() {
		return
	}
	if pr, ok := f.Order.(PrevRanker); ok {
		if prev, calls := pr.PrevRanks(); prev != nil {
			f.jobs.permuteBy(prev, calls)
			return
		}
	}
	ix, ok := f.Order.(RankIndexer)
	if !ok {
		f.jobs.forgetRanks()
		return
	}
	f.jobs.permute(ix.RankIndexes())
}

// Idle readies, between decisions, memory the next decision would
// otherwise fault in (Idler): the Capacity's slot reserve, and the
// ordering's buffers where it is an Idler too.
func (f *Framework) Idle() {
	if f.free != nil {
		f.free.Idle()
	}
	if i, ok := f.Order.(Idler); ok {
		i.Idle()
	}
}

func (f *Framework) learn(s *Snapshot) {
	if f.learnsFinished() { // a pass over every job: only when someone listens
		// a tracked snapshot's unchanged jobs were seen last time; the
		// others are a cache miss each, so at scale parts of the list are
		// searched side by side, and the finished jobs fed to the
		// learners in list order, as one pass would
		tracked := f.learnt.Update(s)
		k := splitParts(len(s.Jobs))
		f.finished = grow(f.finished, k)
		if k > 1 {
			split(len(s.Jobs), k, func(part, lo, hi int) { f.findFinished(s, tracked, part, lo, hi) })
		} else {
			f.findFinished(s, tracked, 0, 0, len(s.Jobs))
		}
		for _, fin := range f.finished {
			for _, i := range fin {
				f.ObserveFinished(s.Jobs[i])
			}
		}
	}
	for _, p := range []any{f.Order, f.Place} {
		if o, ok := p.(SnapshotObserver); ok {
			o.ObserveSnapshot(s)
		}
	}
}

// findFinished is learn's part over the jobs [lo, hi): the finished ones
// not seen unchanged before.
func (f *Framework) findFinished(s *Snapshot, tracked bool, part, lo, hi int) {
	fin := f.finished[part][:0]
	for i := lo; i < hi; i++ {
		if tracked && f.learnt.Same(i) {
			continue
		}
		if j := s.Jobs[i]; j != nil && j.State == Finished {
			fin = append(fin, int32(i))
		}
	}
	f.finished[part] = fin
}

func (f *Framework) learnsFinished() bool {
	_, o := f.Order.(FinishObserver)
	_, p := f.Place.(FinishObserver)
	return o || p
}

func (f *Framework) blocksHead() bool {
	b, ok := f.Order.(HeadOfLineBlocker)
	return ok && b.BlocksHeadOfLine()
}

func (f *Framework) batchSize() int {
	if b, ok := f.Place.(BatchPlacer); ok {
		return b.BatchSize()
	}
	return 1
}

func (f *Framework) util(j *Job) float64 {
	if u, ok := f.Place.(UtilPredictor); ok {
		return u.PredictUtil(j)
	}
	return 0
}

func (f *Framework) canPreempt(j *Job, now Seconds) bool {
	g, ok := f.Order.(PreemptionGuard)
	return !ok || g.CanPreempt(j, now)
}
