package live

import (
	"slices"
	"sort"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// A round's cost grows with the changes since the last round, not with the
// jobs (issue #20). Every managed job's entry, its policy view and its
// class are kept across rounds (incr) and rebuilt only for jobs that
// changed:
//
//   - a job whose stub or allocations the mirror changed (mirror.changed,
//     set by every event that touches it);
//   - a job whose record the last round changed (admitted, preempted,
//     sent back unplaced, or aged out: incr.marked);
//   - a job whose progress points the poller changed (its view only);
//   - a job whose classification depends on the clock (running jobs bad
//     placement, queued jobs whose full job is unread or in place
//     backoff).
//
// What moves with time alone is brought forward each round without
// re-reading the job: running jobs' accrued service (there are at most as
// many as GPUs) and the finished-job age-out. Eligibility is recomputed for
// every job only when the nodes or pools change (a new node-set memo).
// Per class, the policy's nodes keep their storage and a Cluster.Gen
// counter per node, so the policy's Capacity re-reads only nodes whose
// usage moved.
//
// The safety net: a new mirror (a full reconcile), a new state (a new
// leader term), a wholesale re-sort of the mirror, or every
// Scheduler.fullEvery rounds, the round classifies every job afresh
// exactly as before (classify, classes, snapshot), and the cache is
// seeded from that round. incremental_test.go runs random changes through
// an incremental and an always-full scheduler side by side and checks
// every snapshot, decision and record are the same.

// fullEvery is how many incremental rounds may pass between two full ones.
const fullEvery = 200

// incr is what the incremental round keeps.
type incr struct {
	m        *mirror // the mirror, state and memo the cache was built on:
	st       *state  // another one means a full rebuild
	epoch    uint64
	sets     *nodeSets
	poolsGen uint64
	// ents is every managed job's entry in the mirror's order (submit
	// time, then ID), byID the same by ID.
	ents []*entry
	byID map[string]*entry
	// known is byID's keys for the progress poller; changed only under
	// the progress book's lock.
	known map[string]bool
	// marked is the jobs whose records this round changed: refreshed
	// next round.
	marked map[string]bool
	// rounds since the last full one; classes by node-set id.
	rounds  int
	classes map[int]*class
	// refreshed counts this round's rebuilt entries (the view is built
	// again when it is not zero, see viewDue).
	refreshed int
	// nodesMoved says this round's nodes or pools are not last round's.
	nodesMoved bool
	view       viewMemo
	// stamp is the last Snapshot.JobGen stamp handed out: one counter
	// for every class, so a stamp is never reused for another job state.
	stamp uint64
}

// stampNext hands out a fresh JobGen stamp.
func (in *incr) stampNext() uint64 {
	in.stamp++
	return in.stamp
}

// kept is what an entry carries from round to round in the incremental
// round.
type kept struct {
	pj    *policy.Job // the policy's view (nil: the policy does not see it)
	pjOK  bool        // pj is current but for the clock
	gen   uint64      // pj's stamp (Snapshot.JobGen), new on every change
	pgen  uint64      // its progress stamp (Snapshot.ProgressGen), new on progress
	cls   *class      // the job's class (nil: none)
	clsOK bool        // cls and unfit are current
	// tgt is a running job's progress target (nil: none), once tgtOK.
	tgt   *progressTarget
	tgtOK bool
}

// wantFull reports whether this round must classify everything afresh.
func (s *Scheduler) wantFull() bool {
	in, m := s.inc, s.mirror
	return in == nil || in.m != m || in.st != s.st || in.epoch != m.epoch || in.rounds >= s.fullEvery
}

// classifyFull is the full round's classification: every job afresh
// (classify), then the cache is seeded from the result.
func (s *Scheduler) classifyFull(w *world, now float64) []*entry {
	m := s.mirror
	m.takeChanged()
	s.progress.takeChanged()
	w.jobs = m.managedJobs(s.managed)
	es := s.classify(w, now)
	in := &incr{m: m, st: s.st, epoch: m.epoch, ents: es, byID: make(map[string]*entry, len(es)),
		known: make(map[string]bool, len(es)), marked: map[string]bool{}, classes: map[int]*class{}}
	for _, e := range es {
		in.byID[e.stub.ID] = e
		in.known[e.stub.ID] = true
	}
	s.inc = in
	return es
}

// classifyIncr brings the kept entries up to now: rebuilds the changed
// jobs, accrues running jobs' service, ages out finished records.
func (s *Scheduler) classifyIncr(now float64) []*entry {
	in, m := s.inc, s.mirror
	in.rounds++
	in.refreshed = 0
	changed := m.takeChanged()
	if changed == nil {
		changed = map[string]bool{}
	}
	for id := range in.marked {
		changed[id] = true
	}
	in.marked = map[string]bool{}
	for _, e := range in.ents {
		if e.volatile() {
			changed[e.stub.ID] = true
		}
	}
	s.readJobs(m.stubsOf(changed))
	for id := range changed {
		s.refresh(id, now)
	}
	for id := range s.progress.takeChanged() {
		if e := in.byID[id]; e != nil {
			s.progressed(e)
			in.view.progressed = true
		}
	}
	for _, e := range in.ents {
		if e.fresh {
			e.fresh = false
			continue
		}
		if e.phase == phaseRunning {
			if e.allocs.running > 0 {
				if e.rec.accrue(now, share(e.held)) {
					s.dirty = true
				}
			} else {
				e.rec.pause()
			}
		}
	}
	s.ageOut(now)
	return in.ents
}

// volatile reports whether an entry's classification depends on more than
// the mirror and its record: a running job's unreadable placement (logged
// and counted every round) or a queued job whose full job could not be
// read (read again every round).
func (e *entry) volatile() bool {
	switch e.phase {
	case phaseRunning:
		return e.badPlacement != ""
	case phaseGone:
		return false
	}
	return e.job == nil || e.job.err != nil && e.job.index == 0
}

// refresh rebuilds one job's entry from the mirror, or drops it (and its
// record, as forget does) when the job is gone or no longer managed.
func (s *Scheduler) refresh(id string, now float64) {
	in, m := s.inc, s.mirror
	old := in.byID[id]
	if old != nil { // replaced or removed below: its GPUs leave the held book
		s.held.drop(old)
	}
	j := m.jobs[id]
	if j == nil || !s.managed(j) {
		if old != nil {
			in.remove(old)
			s.know(id, false)
		}
		if _, ok := s.st.Jobs[id]; ok {
			delete(s.st.Jobs, id)
			delete(s.jobs, id)
			delete(s.badLogged, id)
			delete(s.parkTried, id)
			s.dirty = true
		}
		return
	}
	e := s.classifyJob(j, m.byJob[id], now)
	e.fresh = true
	in.refreshed++
	if old != nil && old.stub.SubmitTime == j.SubmitTime {
		if i := in.indexOf(old); i >= 0 {
			in.ents[i], in.byID[id] = e, e
			return
		}
	}
	if old != nil {
		in.remove(old)
	} else {
		s.know(id, true)
	}
	in.insert(e)
}

// ageOut drops records of jobs that finished over an hour ago, as forget
// does; such a job, still in Nomad, is classified afresh next round.
func (s *Scheduler) ageOut(now float64) {
	for _, e := range s.inc.ents {
		r := e.rec
		if r.FinishedAt > 0 && now-r.FinishedAt > 3600 && s.st.Jobs[e.stub.ID] == r {
			id := e.stub.ID
			delete(s.st.Jobs, id)
			delete(s.jobs, id)
			delete(s.badLogged, id)
			delete(s.parkTried, id)
			s.dirty = true
			s.inc.marked[id] = true
		}
	}
}

// know tells the progress poller a job exists (or no longer does).
func (s *Scheduler) know(id string, on bool) {
	b := s.progress
	b.mu.Lock()
	defer b.mu.Unlock()
	if on {
		s.inc.known[id] = true
		return
	}
	delete(s.inc.known, id)
	delete(b.jobs, id)
}

// indexOf finds e in ents by its stub's order, -1 if absent.
func (in *incr) indexOf(e *entry) int {
	i := sort.Search(len(in.ents), func(i int) bool { return !jobBefore(in.ents[i].stub, e.stub) })
	if i < len(in.ents) && in.ents[i] == e {
		return i
	}
	for i, o := range in.ents { // a stub edited in place (tests); never in Nomad's flow
		if o == e {
			return i
		}
	}
	return -1
}

func (in *incr) remove(e *entry) {
	if i := in.indexOf(e); i >= 0 {
		in.ents = append(in.ents[:i], in.ents[i+1:]...)
	}
	delete(in.byID, e.stub.ID)
}

func (in *incr) insert(e *entry) {
	i := sort.Search(len(in.ents), func(i int) bool { return !jobBefore(in.ents[i].stub, e.stub) })
	in.ents = append(in.ents, nil)
	copy(in.ents[i+1:], in.ents[i:])
	in.ents[i] = e
	in.byID[e.stub.ID] = e
}

// progressed brings e's policy view up to its progress just read: in
// place with a new progress stamp (Snapshot.ProgressGen) where the view
// is current, so the policies that do not read progress need not read
// the job again; else the view is built afresh, progress included.
func (s *Scheduler) progressed(e *entry) {
	k := &e.kept
	if !k.pjOK || k.pj == nil {
		k.pjOK = false
		return
	}
	s.fillProgress(k.pj)
	k.pgen = s.inc.stampNext()
}

// mark says the round changed a job's record (or phase): its entry is
// rebuilt next round, and its view and class now.
func (s *Scheduler) mark(e *entry) {
	if s.inc == nil {
		return
	}
	s.inc.marked[e.stub.ID] = true
	e.kept.pjOK, e.kept.clsOK = false, false
}

// entryIndex is the round's entries by ID: the kept index when the cache
// holds these entries, else one built from es.
func (s *Scheduler) entryIndex(es []*entry) map[string]*entry {
	if s.inc != nil && s.inc.rounds > 0 {
		return s.inc.byID
	}
	byID := make(map[string]*entry, len(es))
	for _, e := range es {
		byID[e.stub.ID] = e
	}
	return byID
}

// markDecided marks every job a decision started or preempted: apply may
// have changed their records.
func (s *Scheduler) markDecided(dec policy.Decision) {
	if s.inc == nil {
		return
	}
	for _, id := range dec.Preempts {
		if e := s.inc.byID[id]; e != nil {
			s.mark(e)
		}
	}
	for _, st := range dec.Starts {
		if e := s.inc.byID[st.JobID]; e != nil {
			s.mark(e)
		}
	}
}

// viewEvery bounds how stale the queue view may get in rounds where
// nothing but the clock moved (waits and accrued service); viewGap is the
// least time between two views built because jobs changed. Building one
// sorts every job (5 ms at 18,000 jobs), which rounds coming every few
// milliseconds under a stream of events would otherwise pay each time.
// Both grow with the jobs past 2,500 (viewGapFor): at 10,000 jobs the
// views built four times a second were a third of all the scheduler
// allocated, and so of its collections, on a machine it shared with the
// Nomad server.
const (
	viewEvery = time.Second
	viewGap   = 250 * time.Millisecond
	// viewPerJob is the gap's share per job: 1 s at 10,000 jobs.
	viewPerJob = 100 * time.Microsecond
)

// viewGapFor is the least gap between views, and the most a view may
// age, with n jobs.
func viewGapFor(n int) (gap, every time.Duration) {
	gap = max(viewGap, time.Duration(n)*viewPerJob)
	return gap, max(viewEvery, 2*gap)
}

// viewMemo is when the last queue view was built, and what changed since.
type viewMemo struct {
	at         time.Time
	ranking    []policy.Rank // the last round's
	progressed bool          // progress points arrived
	nodes      bool          // the nodes or pools changed
	pending    bool          // something the view shows changed
	poked      bool          // a round is due at the gap's end
}

// leanRound reports whether the round's decisions may leave out the
// queued jobs' reasons (Snapshot.SkipReasons; a preempted job's are
// still given): only the queue view reads them, and none can be due
// before its gap since the last. At 100,000 jobs, writing ~100,000
// Waits a decision bought nothing in the ~50 rounds between two views.
func (s *Scheduler) leanRound(full bool, jobs int, now time.Time) bool {
	if full || s.inc == nil {
		return false
	}
	gap, _ := viewGapFor(jobs)
	return now.Sub(s.inc.view.at) < gap
}

// viewDue reports whether the queue view of jobs jobs must be built
// again: after a full round, viewGapFor's every after the last, or its
// gap after it when a job, the ranking, progress or the nodes changed (a
// round is poked at the gap's end so the change shows even if no event
// follows). A lean round's ranking counts as a change.
func (s *Scheduler) viewDue(full bool, jobs int, ranking []policy.Rank, now time.Time, lean bool) bool {
	in := s.inc
	vm := &in.view
	if lean {
		vm.pending = true // its ranking may be empty: count it as moved
	} else if !slices.Equal(ranking, vm.ranking) {
		// a copy: the round's ranking is the policy's storage, rewritten
		// in place by its next Decide
		vm.ranking = append(vm.ranking[:0], ranking...)
		vm.pending = true
	}
	if in.refreshed > 0 || len(in.marked) > 0 || vm.progressed || vm.nodes {
		vm.pending = true
	}
	vm.progressed, vm.nodes = false, false
	age := now.Sub(vm.at)
	gap, every := viewGapFor(jobs)
	if full || age >= every || vm.pending && age >= gap {
		*vm = viewMemo{at: now, ranking: vm.ranking}
		return true
	}
	if vm.pending && !vm.poked {
		vm.poked = true
		time.AfterFunc(gap-age, s.poke)
	}
	return false
}
