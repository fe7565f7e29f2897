package policy

import (
	"math"
	"strconv"
)

// round is the state of one Decide call.
type round struct {
	f   *Framework
	s   *Snapshot
	cap *Capacity
	dec Decision
	fit ClusterLimits
	// shapes memoises, per shape, placement failures (valid while Epoch
	// holds) and failures even with preemption from some rank on: later
	// ranks have fewer victims, so they fail too.
	shapes map[shapeBits]*shapeMemo
	// recent caches shapes in front of the map: a queue has few distinct
	// shapes, and comparing a key beats hashing it (recentSlots, probed
	// from slot on).
	recent [recentSlots]recentShape
	// queued is whether Waiting texts carry a "queue N: " prefix, and
	// topQueue the ordering's deepest queue then (0 otherwise)
	queued     bool
	topQueue   int
	preemptive bool
	held       *fenwick // GPU share of preemptable running jobs by rank
	ranked     []Ranked
	running    []int   // ranks of preemptable running jobs, ascending by queue (preempt_loose.go)
	preempted  []bool  // by rank
	skip       []int32 // by position in running (live)
	// looseFrom: the positions of running below it list their ranks in
	// a loose ranking's order, not sorted yet (preempt_loose.go)
	looseFrom int
	victims   []int     // tryVictims' scratch list
	refs      []refSlot // by position in running (victimRefs)
	refRound  uint64
	// trials is the Capacity's trial memo for this round (nil: none);
	// settled is settle's list of the victims it preempted
	trials  *trialStore
	settled []int32
	// failed is the demands whose trials failed with every victim
	// released (preempt_bound.go)
	failed failedTrials
	loads  []gpuLoad // roundTrips' scratch
	// loaded is what r.loads were read for (loadsFor); victimGen counts
	// the round's preemptions, which change the victims below a rank
	loaded    loadsFor
	victimGen int
	// lz is the running trial's lazy releases (nil: every victim of it
	// is released; preempt_lazy.go)
	lz    *lazyTrial
	room  bool       // tryPlace failed for lack of room
	trip  tripCheck  // the last roundTrips check that held
	nodes *nodeMarks // roundTrips' GPUs by node
	// info is the ranked jobs' states and gangs, read in one pass (nil
	// when reasons are skipped: jobs are then read where needed)
	info []rankInfo
	// guarded is the PreemptionGuard's answer for each running job by
	// rank, when the Framework's jobCache asked it (nil: ask per job)
	guarded []bool
	window  batchWindow
	// tracked: s carries JobGen and the rank pass reads (reads), so the
	// Framework's jobCache is current and the Decision reuses storage
	tracked bool
	// at is the ordering's RankIndexes where the jobCache ranked by them
	// (1 + each rank's index in s.Jobs; nil: not known)
	at []int32
	// lazyAt is RankIndexes where the ordering left Ranked.Job nil
	// (IndexOrderer): job reads the job from the snapshot
	lazyAt []int32
	// reads: the rank pass reads every job (rankAll) for the walk info,
	// as it must for reasons and pays for at scale (the skipping walk)
	reads bool
	// budget is the failure of the jobs past the start budget (budget.go)
	budget *failure
}

// shapeMemo is what a round learned about one shape.
type shapeMemo struct {
	place, preempt *failure
	// hopeless: a job of the shape did not fit with every victim ranked
	// below it released (or not even by the GPU sums), so no later-ranked
	// job of the shape can start in this round, epoch or not. For a
	// later rank, the capacity with its victims released is at most that
	// one: since then the round only committed gangs and released victims
	// ranked below the earlier job, which that trial had released too;
	// and a placer fails on less capacity where it failed on more (the
	// Placer contract the epoch memo rests on as well).
	hopeless bool
}

// failure is a memoised reason a shape does not fit at an epoch. Every job
// of the shape waits for the same reason, so its Waiting text is built
// once per queue rather than once per job.
type failure struct {
	epoch   int
	reason  string
	byQueue []string // reason with its "queue N: " prefix, built lazily
	// room: a placement failure for lack of room (shortOf or the
	// placer's reason), not a placement the Capacity rejected
	room bool
	// warmed: byQueue is built for the queues below it (skipIndex.warm,
	// warmText)
	warmed int
}

// valid reports whether f is a failure still holding at epoch.
func (f *failure) valid(epoch int) bool { return f != nil && f.epoch == epoch }

// maxCachedQueue bounds byQueue; deeper queues (never seen in practice)
// just build their text each time.
const maxCachedQueue = 64

// text is the Waiting text of a job in queue q.
func (f *failure) text(q int, prefixed bool) string {
	if !prefixed && q <= 0 {
		return f.reason
	}
	if q < 0 || q >= maxCachedQueue {
		return queuePrefix(q) + f.reason
	}
	for len(f.byQueue) <= q {
		f.byQueue = append(f.byQueue, "")
	}
	if f.byQueue[q] == "" {
		f.byQueue[q] = queuePrefix(q) + f.reason
	}
	return f.byQueue[q]
}

// warmText is text without building anything: a text warm did not
// build is built anew each time, not cached (the skipping walk's split
// fill asks it from several goroutines).
func (f *failure) warmText(q int, prefixed bool) string {
	switch {
	case !prefixed && q <= 0:
		return f.reason
	case q >= 0 && q < f.warmed:
		return f.byQueue[q]
	}
	return queuePrefix(q) + f.reason
}

func queuePrefix(q int) string { return "queue " + strconv.Itoa(q) + ": " }

// roundPlugins is what a round asks its ordering and placement before it
// starts, asked on the Decide goroutine (newRound may run beside Order).
type roundPlugins struct {
	queued, preemptive, residents, trials bool
	topQueue                              int
}

func (f *Framework) roundPlugins() roundPlugins {
	qs, queued := f.Order.(interface{ Queues() int })
	cp, ok := f.Place.(CapacityPlacer)
	q := roundPlugins{queued: queued, preemptive: f.Order.Preemptive(), residents: f.tracksResidents()}
	if queued {
		q.topQueue = max(qs.Queues()-1, 0)
	}
	q.trials = q.preemptive && ok && cp.PlacesOnCapacity() && !q.residents
	return q
}

// newRound starts a round: the capacity, the job cache's stamps, the
// storage of the Decision. It touches neither the ordering nor the jobs'
// fields beyond reading them (Decide runs it beside Order at scale).
func newRound(f *Framework, s *Snapshot, q roundPlugins) *round {
	r := &round{
		f:          f,
		s:          s,
		cap:        f.capacity(&s.Cluster),
		shapes:     map[shapeBits]*shapeMemo{},
		queued:     q.queued,
		topQueue:   q.topQueue,
		preemptive: q.preemptive,
		// roundTrips' storage, the last round's (~0.3 MB a round
		// allocated afresh, in fresh pages)
		loads: f.loads[:0],
		nodes: &f.nodes,
	}
	// without reasons a preemptive ordering at scale still reads every
	// job, for the skipping walk: walking job by job was three times
	// slower at 100,000 jobs. The others, and small snapshots, keep the
	// job-by-job walk, which stops where the cluster is full and nothing
	// below can be preempted (a congested replay's fifo, 4× faster).
	if r.reads = !s.SkipReasons || q.preemptive && len(s.Jobs) >= skipWalkMin; r.reads {
		r.tracked = f.jobs.refresh(s)
	} else {
		f.jobs.track.Reset() // it must see every snapshot to trust a stamp
		f.jobs.kept = false  // nor is this round's ranking kept
	}
	if r.tracked { // JobGen's contract: the last Decision's storage is ours again
		// room for every job, so no append regrows it mid-walk (a
		// 100,000-entry copy)
		if cap(f.jobs.waiting) < len(s.Jobs) {
			f.jobs.waiting = make(Waits, 0, len(s.Jobs)+len(s.Jobs)/8)
		}
		r.dec.Waiting = f.jobs.waiting[:0]
	} else {
		r.dec.Waiting = make(Waits, 0, reasonsCap(s))
	}
	r.fit = r.cap.Limits(&s.Cluster)
	if q.residents {
		r.cap.TrackResidents(s.Jobs)
	}
	r.trials = r.cap.trialRound(q.trials)
	return r
}

// shapeBits is a ShapeKey as plain integers: the memo is looked up once
// per queued job, and a key of integers hashes as one block of memory
// while float fields are hashed one by one.
type shapeBits struct {
	workers     int
	frac, extra uint64
	mem         int64
}

// bitsOf converts k; ok is false for NaN fields, which never equal
// themselves and so must never hit the memo.
func bitsOf(k ShapeKey) (shapeBits, bool) {
	if k.Fraction != k.Fraction || k.Extra != k.Extra {
		return shapeBits{}, false
	}
	return shapeBits{workers: k.Workers, frac: floatBits(k.Fraction), extra: floatBits(k.Extra), mem: k.MemMiB}, true
}

// floatBits is v's bit pattern, with -0 and +0 alike as they compare equal.
func floatBits(v float64) uint64 {
	if v == 0 {
		return 0
	}
	return math.Float64bits(v)
}

type recentShape struct {
	key shapeBits
	m   *shapeMemo
}

// recentSlots is the size of round.recent, and recentProbes how many
// slots from a shape's own one it may take: tens of shapes fit, and a
// shape that finds them all taken is looked up in the map.
const (
	recentBits   = 7
	recentSlots  = 1 << recentBits
	recentProbes = 4
)

// slot picks b's first entry in recent. The fields are mixed, then
// multiplied so that every bit reaches the top ones: a fraction's bits
// differ below the top, and without the multiply 0.25, 0.5 and 0.75 of
// one memory shared a slot and evicted each other job after job.
func (b shapeBits) slot() int { return int(b.hash() >> (64 - recentBits)) }

// hash mixes b's fields into bits that all depend on every field.
func (b shapeBits) hash() uint64 {
	h := uint64(b.workers)*0x9e3779b97f4a7c15 ^ b.frac ^ b.extra>>7 ^ uint64(b.mem)*0xff51afd7ed558ccd
	return h * 0xbf58476d1ce4e5b9
}

// memo is the memo entry of a shape, created on first use.
func (r *round) memo(key ShapeKey) *shapeMemo {
	b, ok := bitsOf(key)
	if !ok {
		return &shapeMemo{} // a fresh entry: nothing is shared
	}
	return r.memoBits(b)
}

// memoBits is memo for the key b.
func (r *round) memoBits(b shapeBits) *shapeMemo {
	var free *recentShape
	for i, s := 0, b.slot(); i < recentProbes; i++ {
		c := &r.recent[(s+i)%recentSlots]
		if c.m == nil {
			free = c
			break
		}
		if c.key == b {
			return c.m
		}
	}
	m := r.shapes[b]
	if m == nil {
		m = &shapeMemo{}
		r.shapes[b] = m
	}
	if free != nil { // entries are never evicted: a round's shapes are few
		free.key, free.m = b, m
	}
	return m
}

// rankAll fills Decision.Ranking and info in one pass over the ranked
// jobs. At 100,000 jobs each job is a cache miss wherever it is first
// read in rank order; this loop's iterations are independent, so the
// processor overlaps those misses, where the walk, doing more per job,
// took them one by one (a quarter of a decision). The walk then reads the
// compact copy.
//
// For a tracked snapshot (Snapshot.JobGen) the Framework's jobCache
// fills both from the last round's where a job is unchanged and the
// ordering says where it is listed (RankIndexer).
func (r *round) rankAll(ranked []Ranked) {
	if r.tracked {
		if ix, ok := r.f.Order.(RankIndexer); ok {
			if at := ix.RankIndexes(); len(at) == len(ranked) {
				g, _ := r.f.Order.(PreemptionGuard)
				pr, _ := r.f.Order.(PrevRanker)
				r.dec.Ranking, r.info = r.f.jobs.rank(r.s, ranked, at, pr, r.preemptive, g)
				r.guarded, r.at = r.f.jobs.guarded, at
				return
			}
		}
		// every job is read: the plain pass, into reused storage
		r.f.jobs.forgetRanks()
		if !skipRanking(r.s) {
			r.dec.Ranking = grow(r.f.jobs.ranking, len(ranked))
			r.f.jobs.ranking = r.dec.Ranking
		}
	} else if !skipRanking(r.s) {
		r.dec.Ranking = make([]Rank, len(ranked))
	}
	if cap(r.f.info) < len(ranked) {
		r.f.info = make([]rankInfo, len(ranked))
	}
	r.info = r.f.info[:len(ranked)]
	rr := rankRead{ranked: ranked, ranking: r.dec.Ranking, info: r.info, preemptive: r.preemptive, now: r.s.Now,
		s: r.s, at: r.lazyAt}
	if g, ok := r.f.Order.(PreemptionGuard); ok && r.preemptive {
		// asked here, where each job is read anyway (ConcurrentGuard)
		if rr.guard = concurrentGuard(g); rr.guard != nil {
			rr.ok = grow(r.f.guarded, len(ranked))
			r.f.guarded, r.guarded = rr.ok, rr.ok
		}
	}
	// parts side by side at 100,000 jobs, each writing its own ranks
	if k := splitParts(len(ranked)); k > 1 {
		split(len(ranked), k, func(_, lo, hi int) { rr.read(lo, hi) })
	} else {
		rr.read(0, len(ranked))
	}
}

// skipRanking says the round writes no Ranking: its caller reads no
// reasons (Snapshot.SkipReasons), and the walk then reads no rank's ID
// or queue from it, so at 100,000 jobs the rank pass need not write 24
// bytes a job (and read the ordering's queue for it) for nobody.
func skipRanking(s *Snapshot) bool { return s.SkipReasons }

// rankRead is rankAll's plain pass: what it reads and writes.
type rankRead struct {
	ranked []Ranked
	// s and at find a rank's job the ordering left nil (IndexOrderer)
	s          *Snapshot
	at         []int32
	ranking    []Rank
	info       []rankInfo
	preemptive bool
	// guard, unless nil, is asked for every running job into ok (by
	// rank)
	guard PreemptionGuard
	ok    []bool
	now   Seconds
}

// read is the plain pass over the ranks [lo, hi).
func (rr *rankRead) read(lo, hi int) {
	ranked, ranking, info := rr.ranked, rr.ranking, rr.info
	for i := lo; i < hi; i++ {
		// written field by field, not through a function returning the
		// struct: that cost the untracked path ~1.5 ms at 100,000 jobs
		x := &ranked[i]
		j := jobOf(rr.s, ranked, rr.at, i)
		if ranking != nil {
			ranking[i] = Rank{JobID: j.ID, Queue: x.Queue}
		}
		info[i].setJob(j)
		if j.State == Running && rr.preemptive { // only victims' shares are read
			info[i].held = j.Placement.GPUs()
			if rr.guard != nil {
				rr.ok[i] = rr.guard.CanPreempt(j, rr.now)
			}
		}
	}
}

// rankInfo is what the walk reads of a ranked job: its state and gang,
// and for a running job the GPU share it holds. id is the job's ID, kept
// beside them for the rank pass (jobCache): an unchanged job's entry,
// copied from its last rank, is then one random read of 56 bytes, not
// one of 40 and another of 16.
//
// shape is 1 + the skipping walk's kept id of a queued job's shape
// (walk_skip_index.go), 0 until the walk has classified the entry: an
// unchanged job's entry carries it from round to round, so the walk's
// index does not work out the shape of every queued job every round.
// state (infoState) shares its eight bytes.
type rankInfo struct {
	id      string
	state   int32
	shape   int32
	workers int
	frac    float64
	mem     int64
	held    float64
}

// setJob writes j's entry in place, shape and held cleared. Field by
// field: a struct literal stored into a slice element is built on the
// stack and copied over (a write-barrier move of 56 bytes), about as
// costly again as the stores at 100,000 jobs a pass.
func (in *rankInfo) setJob(j *Job) {
	in.id, in.state, in.shape, in.workers = j.ID, infoState(j.State), 0, j.Workers
	in.frac, in.mem, in.held = j.Fraction, j.MemMiB, 0
}

// infoState is s as rankInfo keeps it; a state beyond 32 bits is no
// state the walk knows (as it was before it was kept).
func infoState(s JobState) int32 {
	if s != JobState(int32(s)) {
		return -1
	}
	return int32(s)
}

// job is the job ranked i.
func (r *round) job(i int) *Job { return jobOf(r.s, r.ranked, r.lazyAt, i) }

// state is the state of the job at rank i.
func (r *round) state(i int) JobState {
	if r.info != nil {
		return JobState(r.info[i].state)
	}
	return r.job(i).State
}

// holds is the GPU share the running job at rank i holds.
func (r *round) holds(i int) float64 {
	if r.info != nil {
		return r.info[i].held
	}
	return r.job(i).Placement.GPUs()
}

// demand is DemandOf the job at rank i.
func (r *round) demand(i int) (Demand, error) {
	if r.info == nil {
		return DemandOf(r.job(i))
	}
	if d, ok := r.info[i].demand(); ok {
		return d, nil
	}
	return DemandOf(r.job(i)) // its error names the job
}

// demand is the gang the entry holds, and whether DemandOf would
// accept it.
func (in *rankInfo) demand() (Demand, bool) {
	d := Demand{Workers: in.workers, Fraction: in.frac, MemMiB: in.mem}
	if d.Fraction == 0 {
		d.Fraction = 1
	}
	return d, d.Workers > 0 && d.Fraction > 0 && d.Fraction <= 1 && d.MemMiB >= 0
}

// waitAt is wait for the job at rank i.
func (r *round) waitAt(i int, why string) {
	if r.s.SkipReasons {
		return
	}
	r.dec.Waiting = append(r.dec.Waiting, Wait{JobID: r.dec.Ranking[i].JobID, Reason: why})
}

// walk visits the ranked jobs; batch placers get windows of queued jobs.
func (r *round) walk(ranked []Ranked) {
	r.ranked = ranked
	r.f.skips.visits, r.f.skips.victims = 0, false
	hol, batch := r.f.blocksHead(), r.f.batchSize()
	// the skipping walk's index comes first: its pass over the ranks
	// finds the victims too (walk_skip_index.go)
	skipping := !hol && batch <= 1 && r.skipIndexed()
	if r.preemptive {
		r.indexVictims()
		r.initFailed()
		r.f.failedBig.turn()
	}
	if skipping {
		r.walkSkipping()
		return
	}
	for i := 0; i < len(ranked); i++ {
		if r.state(i) != Queued {
			continue
		}
		if r.s.SkipReasons && r.exhausted(i) {
			break // nothing below can start: only reasons would come of it
		}
		d, ok := r.admissible(i)
		if !ok {
			continue
		}
		if batch > 1 && !hol {
			i = r.batchFrom(i, batch)
		} else if !r.admit(i, d) && hol {
			if !r.s.SkipReasons { // else nothing behind a blocked head would change
				r.waitBehind(i + 1)
			}
			return
		}
		if r.spent() {
			r.waitPastBudget(i + 1)
			return
		}
	}
}

// exhausted reports that no GPU share is free and no preemptable job
// ranks below i, so no job from rank i on can start. A replay's congested
// queue is mostly such jobs, each visited on every event.
func (r *round) exhausted(i int) bool {
	return r.cap.FreeSum() < eps && (!r.preemptive || r.held.sumFrom(i+1) < eps)
}

// indexVictims records the running jobs a preemptive ordering may stop.
func (r *round) indexVictims() {
	r.held, r.preempted, r.running = r.f.victimBuffers(len(r.ranked))
	r.running = r.findVictims(r.running)
	r.held.fill(r.running, r.holds)
	r.f.running = r.running // kept for the next round's storage
	r.looseVictims()
	r.skip = grow(r.f.skip, len(r.running))
	r.f.skip = r.skip
	for k := range r.skip {
		r.skip[k] = int32(k)
	}
	r.refs, r.refRound = r.f.victimRefBuffer(len(r.running))
}

// findVictims appends the ranks of the preemptable running jobs to
// running, ascending. Where no guard needs asking job by job (none, or
// the rank pass asked it) and the walk info is read, parts of the ranks
// are searched side by side at scale: a pass over ~120,000 ranks took
// ~1 ms of each churned 10k decision, serially.
func (r *round) findVictims(running []int) []int {
	if x := &r.f.skips; x.victims {
		for p := range x.parts[:splitParts(len(r.ranked))] {
			running = append(running, x.parts[p].victims...)
		}
		return running
	}
	k := splitParts(len(r.ranked))
	if k < 2 || !r.victimsByInfo() {
		for i := range r.ranked {
			if r.state(i) == Running && r.preemptable(i, r.job(i)) {
				running = append(running, i)
			}
		}
		return running
	}
	parts := grow(r.f.victimParts, k)
	r.f.victimParts = parts
	split(len(r.ranked), k, func(p, lo, hi int) {
		found := parts[p][:0]
		for i := lo; i < hi; i++ {
			if r.victimAt(i) {
				found = append(found, i)
			}
		}
		parts[p] = found
	})
	for _, found := range parts {
		running = append(running, found...)
	}
	return running
}

// victimsByInfo reports that the walk info tells each running job's
// preemptability without asking the guard job by job: there is none, or
// the rank pass asked it.
func (r *round) victimsByInfo() bool {
	_, guard := r.f.Order.(PreemptionGuard)
	return r.info != nil && !(guard && r.guarded == nil)
}

// victimAt reports, from the walk info (victimsByInfo), that the job
// at rank i runs and may be preempted.
func (r *round) victimAt(i int) bool {
	return JobState(r.info[i].state) == Running && (r.guarded == nil || r.guarded[i])
}

// preemptable is canPreempt for the running job j at rank i, answered
// already where the rank pass read the job (jobCache.rank).
func (r *round) preemptable(i int, j *Job) bool {
	if r.guarded != nil {
		return r.guarded[i]
	}
	return r.f.canPreempt(j, r.s.Now)
}

// holText is the Waiting text of a job with behind queued jobs ahead of it
// under head-of-line blocking. The texts differ per position, and a
// blocked queue of 30,000 jobs formatted them all on every decision of a
// long replay, so the framework keeps them from one round to the next.
func (f *Framework) holText(behind int) string {
	for len(f.hol) <= behind {
		f.hol = append(f.hol, "head-of-line blocked: behind "+strconv.Itoa(len(f.hol))+" waiting job(s) in FIFO order")
	}
	return f.hol[behind]
}

// admissible validates a queued job and rules out gangs that can never fit.
func (r *round) admissible(i int) (Demand, bool) {
	d, why := r.admission(i)
	if why != "" {
		r.waitAt(i, why)
		return d, false
	}
	return d, true
}

// admission is the demand of the job at rank i, and why it can never
// start ("" if it may): an invalid request, or one no cluster state fits.
// It only reads (the skipping walk asks it from several goroutines).
func (r *round) admission(i int) (Demand, string) {
	d, err := r.demand(i)
	if err != nil {
		return d, "invalid request: " + err.Error()
	}
	return d, r.fit.Never(d)
}

// admit tries to start ranked[i], preempting if the ordering allows.
func (r *round) admit(i int, d Demand) bool {
	j := r.job(i)
	m := r.memo(r.f.Place.Shape(j, d))
	if m.hopeless && r.s.SkipReasons {
		return false // it cannot start (see hopeless): only its reason would change
	}
	p, fail := r.place(j, d, m)
	if fail != nil && r.preemptive {
		p, fail = r.preemptFor(i, d, m, fail)
	}
	if fail != nil {
		if !r.s.SkipReasons { // building the text is not free
			r.waitAt(i, fail.text(r.ranked[i].Queue, r.queued))
		}
		return false
	}
	r.dec.Starts = append(r.dec.Starts, Start{JobID: j.ID, Placement: p})
	return true
}

// place asks the placer for a gang and commits it, memoising failures in
// m, the memo of the job's shape.
func (r *round) place(j *Job, d Demand, m *shapeMemo) (Placement, *failure) {
	if m.place.valid(r.cap.Epoch) {
		return Placement{}, m.place
	}
	r.room = false
	p, why := r.tryPlace(j, d)
	if why != "" {
		m.place = &failure{epoch: r.cap.Epoch, reason: why, room: r.room}
		return Placement{}, m.place
	}
	return p, nil
}

// tryPlace places and commits j's gang; a failure for lack of room
// (shortOf, the placer's reason) sets r.room.
func (r *round) tryPlace(j *Job, d Demand) (Placement, string) {
	if why := shortOf(d, r.cap); why != "" {
		r.room = true
		return Placement{}, why
	}
	p, why := r.f.Place.Place(j, d, r.cap)
	if why != "" {
		r.room = true
		return Placement{}, why
	}
	if len(p.Slots) != d.Workers {
		return Placement{}, "placer " + r.f.Place.Name() + " returned " + strconv.Itoa(len(p.Slots)) +
			" slots for " + strconv.Itoa(d.Workers) + " workers"
	}
	if err := r.cap.commitPlaced(j, p, r.f.util(j)); err != nil {
		return Placement{}, "placer " + r.f.Place.Name() + " chose an invalid placement: " + err.Error()
	}
	r.keepRefs(j, p, nil)
	return p, ""
}

// shortOf is the cheap aggregate check: not enough free GPU in total.
func shortOf(d Demand, c *Capacity) string {
	if d.WholeGPU() {
		if d.Workers > c.WholeFree() {
			return "needs " + d.String() + ", " + strconv.Itoa(c.WholeFree()) + " free"
		}
		return ""
	}
	if d.GPUs() > c.FreeSum()+eps {
		return "needs " + d.String() + ", " + strconv.FormatFloat(c.FreeSum(), 'f', 2, 64) + " GPU free"
	}
	return ""
}

// reasonsCap sizes Decision.Waiting: every job may wait, unless the
// caller skips reasons.
func reasonsCap(s *Snapshot) int {
	if s.SkipReasons {
		return 0
	}
	return len(s.Jobs)
}
