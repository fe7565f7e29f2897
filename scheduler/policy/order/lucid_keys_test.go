package order

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// lucidChurn is a snapshot whose jobs change between rounds in every way
// Lucid's keys can see, stamped as Snapshot.JobGen says.
type lucidChurn struct {
	s     *policy.Snapshot
	rng   *rand.Rand
	stamp uint64
	born  int
	users int // users so far: new ones appear (levels unseen until they finish)
	// touched: the jobs changed this step
	touched map[*policy.Job]bool
	// accrue: running jobs' service accrues (policy.Accrual) and they are
	// stamped only when something else of them changes, so a profiling
	// run ends under an unchanged stamp (Lucid's mover must read the job)
	accrue bool
}

// newLucidChurn is a churn of n fresh jobs of 3 users, its random
// stream set by seed and stream.
func newLucidChurn(seed, stream uint64, n int) *lucidChurn {
	c := &lucidChurn{s: &policy.Snapshot{Now: 1000, Cluster: oneNode(8)}, users: 3,
		rng: rand.New(rand.NewPCG(seed, stream)), touched: map[*policy.Job]bool{}}
	for range n {
		c.s.Jobs = append(c.s.Jobs, c.job())
		c.s.JobGen = append(c.s.JobGen, 0)
		c.touch(len(c.s.Jobs) - 1)
	}
	return c
}

func (c *lucidChurn) touch(i int) {
	c.stamp++
	c.s.JobGen[i] = c.stamp
	if c.touched != nil {
		c.touched[c.s.Jobs[i]] = true
	}
}

// restamp stamps every position listing a job touched this step (a job
// listed twice under one pointer changes at both).
func (c *lucidChurn) restamp() {
	for i, j := range c.s.Jobs {
		if c.touched[j] {
			c.stamp++
			c.s.JobGen[i] = c.stamp
		}
	}
	clear(c.touched)
}

// settle folds a running job's accrued service into its fields (it
// stops running now).
func (c *lucidChurn) settle(j *policy.Job) {
	j.Attained, j.Executed = j.ServiceAt(c.s.Now)
	j.Accrual = policy.Accrual{}
}

func (c *lucidChurn) job() *policy.Job {
	c.born++
	w := []int{1, 1, 2, 4, 8}[c.rng.IntN(5)]
	j := &policy.Job{ID: fmt.Sprintf("j%d", c.born), User: fmt.Sprintf("u%d", c.rng.IntN(c.users)),
		Model: fmt.Sprintf("m%d", c.rng.IntN(3)), Submit: c.s.Now, State: policy.Queued, Workers: w, Fraction: 1}
	if c.rng.IntN(6) == 0 {
		j.Workers, j.Fraction = 1, 0.5
	}
	return j
}

// step lets a round pass; finished jobs are reported to every observer.
func (c *lucidChurn) step(observe func(*policy.Job)) {
	s, r := c.s, c.rng
	s.Now += 30
	if r.IntN(4) == 0 {
		c.users++
	}
	for i, j := range s.Jobs {
		if j.State != policy.Finished && r.IntN(30) == 0 { // its features change (a new stamp says so)
			j.User, j.Workers = fmt.Sprintf("u%d", r.IntN(c.users)), []int{1, 2, 4, 8}[r.IntN(4)]
			j.Model = fmt.Sprintf("m%d", r.IntN(4))
			c.touch(i)
			continue
		}
		switch {
		case j.State == policy.Finished:
			s.Jobs[i] = c.job() // an arrival takes the finished job's place
		case j.State == policy.Running && r.IntN(8) == 0:
			c.settle(j)
			j.State, j.Executed = policy.Finished, j.Executed+float64(r.IntN(3000))
			observe(j)
		case j.State == policy.Running && r.IntN(10) == 0:
			c.settle(j)
			j.State, j.QueuedSince, j.Preemptions = policy.Queued, s.Now, j.Preemptions+1
		case j.State == policy.Running && c.accrue:
			continue // its service accrues: no new stamp
		case j.State == policy.Running:
			j.Executed += 30
		case r.IntN(5) == 0:
			j.State, j.LastStart = policy.Running, s.Now
			if c.accrue {
				j.Accrual = policy.Accrual{On: true, Since: s.Now, GPUs: gpuShare(j)}
			}
		case r.IntN(60) == 0 && !c.touched[j]: // the same job under a new pointer: no new stamp
			cp := *j
			s.Jobs[i] = &cp
			continue
		default:
			continue
		}
		c.touch(i)
	}
	if k := r.IntN(len(s.Jobs)); r.IntN(5) == 0 && s.Jobs[k].State != policy.Finished {
		// a job listed twice under one ID (bad input), at a fresh stamp
		i := r.IntN(len(s.Jobs))
		cp := *s.Jobs[k]
		s.Jobs[i] = &cp
		c.touch(i)
	}
	if k := r.IntN(len(s.Jobs)); r.IntN(4) == 0 && s.Jobs[k].State != policy.Finished {
		// one job listed twice under one pointer: only the new place
		// changed (the job did not)
		i := k + 1 + r.IntN(2)
		if i < len(s.Jobs) {
			s.Jobs[i] = s.Jobs[k]
			c.stamp++
			s.JobGen[i] = c.stamp
		}
	}
	if k := r.IntN(len(s.Jobs)); r.IntN(7) == 0 && s.Jobs[k].State == policy.Queued {
		// reported finished while still listed queued, stamp unchanged
		observe(s.Jobs[k])
	}
	for range 3 {
		s.Jobs = append(s.Jobs, c.job())
		s.JobGen = append(s.JobGen, 0)
		c.touch(len(s.Jobs) - 1)
	}
	c.restamp()
}

// lucidReference ranks s as Lucid did before it kept slots: every active
// job keyed through its entry by ID and the job itself (Size,
// predictFrom), then fully sorted. It is the reference both of Order's
// paths are held to.
func lucidReference(l *Lucid, s *policy.Snapshot) []policy.Ranked {
	l.calls, l.now = l.calls+1, s.Now
	var ks []keyed
	for i, j := range s.Jobs {
		if isActive(j) {
			var k keyed
			if l.phase(j, s.Now) != profiling {
				k = keyed{job: j, k: [3]float64{2, l.Size(j), stateTie(j)}}
			} else {
				l.predictFrom(l.entry(j), j) // record the estimate made at submission
				k = l.phaseKey(j)
			}
			k.at = int32(i + 1)
			ks = append(ks, k)
		}
	}
	l.prune(ks, false)
	return sortKeyed(ks)
}

// A tracked Lucid ranks every churned snapshot exactly as an untracked
// one (which reads every job), while its model learns every round: the
// kept levels, shares and remaining times of unchanged jobs, the entries
// brought to the model's version, features that change, levels learnt
// later, jobs listed twice, pointers that change without a new stamp, an
// entry dropped under a listed job, and untracked rounds in between.
// In a round without reasons (Snapshot.SkipReasons) only the jobs that
// are never victims (running past their profiling) may be out of place:
// without them, the ranking is the reference's.
func TestLucidTrackedSameRanking(t *testing.T) {
	lucidTrackedSameRanking(t, false)
	lucidTrackedSameRanking(t, true)
}

// The same with the keying pass split down to a few jobs a part
// (trackedKeysPar with keyInOrder: movers side by side, partKey in list
// order between the phases), service fixed or accruing.
func TestLucidTrackedSameRankingSplitKeys(t *testing.T) {
	for _, accrue := range []bool{false, true} {
		withSplit(3, func() { lucidTrackedSameRanking(t, accrue) })
	}
}

// The same with modelKeys split over three workers at every size: the
// parallel pass ranks as the serial one, and the count of entries held
// by two slots (which turns it serial) stays exact.
func TestLucidTrackedSameRankingParallel(t *testing.T) {
	defer func(n int, w func() int) { lucidParMin, lucidWorkers = n, w }(lucidParMin, lucidWorkers)
	lucidParMin, lucidWorkers = 1, func() int { return 3 }
	lucidTrackedSameRanking(t, false)
	lucidTrackedSameRanking(t, true)
}

// checkLucidRefs recounts the slots holding each entry.
func checkLucidRefs(t *testing.T, l *Lucid) {
	t.Helper()
	refs := map[*lucidPred]int32{}
	for _, h := range l.hot {
		if h.p != nil {
			refs[h.p]++
		}
	}
	shared := 0
	for p, n := range refs {
		if p.refs != n {
			t.Fatalf("entry %s: %d slots hold it, it counts %d", p.id, n, p.refs)
		}
		if n > 1 {
			shared++
		}
	}
	if shared != l.shared {
		t.Fatalf("%d entries are shared, Lucid counts %d", shared, l.shared)
	}
}

func lucidTrackedSameRanking(t *testing.T, accrue bool) {
	misplaced := 0 // loose rounds whose ranking is not the reference's
	prepares := 0  // Prepare calls that re-ranked
	for seed := uint64(1); seed <= 6; seed++ {
		c := newLucidChurn(seed, 7, 120)
		c.accrue = accrue
		cfg := LucidConfig{Estimate: LucidEstimateConfig{HourOfDay: seed%2 == 0}}
		tracked, plain, ref := newLucid(t, cfg), newLucid(t, cfg), newLucid(t, cfg)
		// prepared is tracked, re-ranked between calls (Prepare): it must
		// rank exactly as tracked does, loose rounds included
		prepared := newLucid(t, cfg)
		for round := range 60 {
			gen := c.s.JobGen
			c.s.JobGen = nil
			want := ids(lucidReference(ref, c.s))
			if got := ids(plain.Order(c.s)); !equal(got, want) {
				t.Fatalf("seed %d round %d: untracked ranked\n%v\nthe reference\n%v", seed, round, got, want)
			}
			if round%13 != 7 { // now and then the tracked one sees an untracked round
				c.s.JobGen = gen
			}
			c.s.SkipReasons = round%3 == 1
			rs := tracked.Order(c.s)
			got := ids(rs)
			if pr := ids(prepared.Order(c.s)); !equal(pr, got) {
				t.Fatalf("seed %d round %d: prepared between calls, ranked\n%v\nnot as without\n%v", seed, round, pr, got)
			}
			c.s.JobGen, c.s.SkipReasons = gen, false
			checkLucidRefs(t, tracked)
			checkLucidRefs(t, prepared)
			if round%3 == 1 && !equal(got, want) {
				misplaced++
				got, want = victimsOrQueued(ref, c.s, got), victimsOrQueued(ref, c.s, want)
			}
			if !equal(got, want) {
				t.Fatalf("seed %d round %d: tracked ranked\n%v\nthe reference\n%v", seed, round, got, want)
			}
			c.step(func(j *policy.Job) {
				plain.ObserveFinished(j)
				tracked.ObserveFinished(j)
				ref.ObserveFinished(j)
				prepared.ObserveFinished(j)
			})
			prepared.Prepare()
		}
		if tracked.est.Version() < 3 {
			t.Fatalf("seed %d: the model refitted %d times, the test needs it to learn", seed, tracked.est.Version())
		}
		prepares += prepared.prepares
	}
	if prepares == 0 {
		t.Fatal("no Prepare re-ranked anything: nothing compared")
	}
	if accrue && misplaced == 0 { // unchanged running jobs keep their sizes only as they accrue
		t.Fatal("no round without reasons kept a running job's last size: nothing compared")
	}
}

// victimsOrQueued is ranking without the jobs running past their
// profiling (main phase), which Lucid never preempts.
func victimsOrQueued(l *Lucid, s *policy.Snapshot, ranking []string) []string {
	fixed := map[string]bool{}
	for _, j := range s.Jobs {
		if j.State == policy.Running && l.phase(j, s.Now) == mainPhase {
			fixed[j.ID] = true
		}
	}
	var out []string
	for _, id := range ranking {
		if !fixed[id] {
			out = append(out, id)
		}
	}
	return out
}

// Cached estimates of jobs that left the snapshots are forgotten after
// 1,000 calls, tracked or not, and a job that comes back within them
// keeps its frozen recent term: a tracked call marks what it ranked
// without reading it.
func TestLucidTrackedPrune(t *testing.T) {
	c := &lucidChurn{s: &policy.Snapshot{Now: 1000, Cluster: oneNode(8)}, users: 2, rng: rand.New(rand.NewPCG(3, 9))}
	for range 6 {
		j := c.job()
		j.Workers, j.Fraction = 8, 1 // never profiled: ranked by estimate
		c.s.Jobs = append(c.s.Jobs, j)
		c.s.JobGen = append(c.s.JobGen, 0)
		c.touch(len(c.s.Jobs) - 1)
	}
	tracked, plain := newLucid(t, LucidConfig{}), newLucid(t, LucidConfig{})
	away := c.s.Jobs[5]
	for round := range 3200 {
		switch round {
		case 400: // away leaves without finishing
			c.s.Jobs, c.s.JobGen = c.s.Jobs[:5], c.s.JobGen[:5]
		case 1300, 3100: // and comes back: its entry was kept, then dropped
			c.s.Jobs, c.s.JobGen = append(c.s.Jobs, away), append(c.s.JobGen, 0)
			c.touch(5)
		case 1400:
			c.s.Jobs, c.s.JobGen = c.s.Jobs[:5], c.s.JobGen[:5]
		}
		if round%50 == 0 { // the model learns a user's recent jobs
			j := c.job()
			j.User, j.State, j.Executed = away.User, policy.Finished, float64(100+round)
			plain.ObserveFinished(j)
			tracked.ObserveFinished(j)
		}
		gen := c.s.JobGen
		c.s.JobGen = nil
		want := ids(plain.Order(c.s))
		c.s.JobGen = gen
		if got := ids(tracked.Order(c.s)); !equal(got, want) {
			t.Fatalf("round %d: tracked ranked %v, untracked %v", round, got, want)
		}
		for _, j := range c.s.Jobs { // no entry was dropped and made again
			if p, q := tracked.pred[j.ID], plain.pred[j.ID]; p == nil || q == nil || p.first != q.first || p.ctx != q.ctx {
				t.Fatalf("round %d: %s's estimates differ: %+v, %+v", round, j.ID, p, q)
			}
		}
		switch round {
		case 1300:
			if p := tracked.pred[away.ID]; p == nil || p.seen != 1301 || p.first != plain.pred[away.ID].first {
				t.Fatalf("the returning job's estimate was not kept")
			}
		case 3099:
			if _, ok := tracked.pred[away.ID]; ok {
				t.Fatalf("the departed job's estimate was not forgotten")
			}
		}
	}
	if _, ok := tracked.pred[away.ID]; !ok {
		t.Fatalf("the returning job has no estimate")
	}
}

// runningAmongQueued is a tracked snapshot without reasons at 1,000 s:
// job id running since then, having run ran, and n queued jobs of its
// model sent back after profiling (main phase, sized by what they ran),
// which ran from, from+1, … seconds.
func runningAmongQueued(id string, ran float64, n int, from float64) *policy.Snapshot {
	r := &policy.Job{ID: id, User: "u", Model: "m", State: policy.Running, Workers: 1, Fraction: 1, Executed: ran,
		Accrual: policy.Accrual{On: true, Since: 1000, GPUs: 1}}
	s := &policy.Snapshot{Now: 1000, Cluster: oneNode(8), Jobs: []*policy.Job{r}, JobGen: []uint64{1}, SkipReasons: true}
	for k := range n {
		q := &policy.Job{ID: fmt.Sprintf("q%d", k), User: "u", Model: "m", State: policy.Queued, Workers: 1, Fraction: 1,
			Executed: from + float64(k), Preemptions: 1}
		s.Jobs, s.JobGen = append(s.Jobs, q), append(s.JobGen, uint64(k+2))
	}
	return s
}

// In a round without reasons a job in its grace window, which may still
// be preempted, is sized again as its service accrues: here it passes
// queued jobs of the same model between two rounds, as the reference
// has it. A job past its grace window ranks first, the others as the
// reference ranks them; with reasons, it is back in its place.
func TestLucidLooseResizesVictims(t *testing.T) {
	tracked, ref := newLucid(t, LucidConfig{}), newLucid(t, LucidConfig{})
	s := runningAmongQueued("p", 85, 120, 80)
	var places []int
	for _, now := range []policy.Seconds{1000, 1030} { // executed 85, then 115: inside the window (80 + 60)
		s.Now = now
		want := ids(lucidReference(ref, s))
		if got := ids(tracked.Order(s)); !equal(got, want) {
			t.Fatalf("at %v: ranked\n%v\nthe reference\n%v", now, got, want)
		}
		places = append(places, slices.Index(want, "p"))
	}
	if places[0] == places[1] || places[1] == 0 {
		t.Fatalf("the job in its grace window was at ranks %v: nothing compared", places)
	}
	s.Now = 1060 // executed 145: past the window, never a victim
	got, want := ids(tracked.Order(s)), ids(lucidReference(ref, s))
	if got[0] != "p" || slices.Index(want, "p") == 0 || !equal(victimsOrQueued(ref, s, got), victimsOrQueued(ref, s, want)) {
		t.Fatalf("past its window the job is not first, or the others differ:\n%v\nthe reference\n%v", got, want)
	}
	s.SkipReasons = false
	if got, want := ids(tracked.Order(s)), ids(lucidReference(ref, s)); !equal(got, want) {
		t.Fatalf("with reasons ranked\n%v\nthe reference\n%v", got, want)
	}
}

// A call without reasons where an entry turns shared (a job listed twice
// under one ID) keys every job exactly, those never victims too: one
// whose mover held its key (hold) is sized from its service now, not
// from the service it was last sized from.
func TestLucidLooseSharedSizesExactly(t *testing.T) {
	tracked, ref := newLucid(t, LucidConfig{}), newLucid(t, LucidConfig{})
	s := runningAmongQueued("f", 200, 200, 150)
	for _, now := range []policy.Seconds{1000, 1050} { // f past its grace window: first, its mover holding from the second call
		s.Now = now
		lucidReference(ref, s)
		if got := ids(tracked.Order(s)); got[0] != "f" {
			t.Fatalf("at %v the job never a victim ranks %d", now, slices.Index(got, "f"))
		}
	}
	s.Now = 1100
	dup := *s.Jobs[5]
	s.Jobs, s.JobGen = append(s.Jobs, &dup), append(s.JobGen, 1000)
	want := ids(lucidReference(ref, s))
	if got := ids(tracked.Order(s)); !equal(got, want) {
		t.Fatalf("with an entry shared, ranked\n%v\nthe reference\n%v", got, want)
	}
	if tracked.shared == 0 || slices.Index(want, "f") == 0 {
		t.Fatalf("%d entries shared, f at rank %d: nothing compared", tracked.shared, slices.Index(want, "f"))
	}
}
