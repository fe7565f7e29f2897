package live

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/hashicorp/nomad/api"
)

// TestIncrementalRoundMatchesFullRebuild drives two schedulers through the
// same random sequence of Nomad changes (jobs submitted, admitted, finished,
// preempted, stopped, purged and re-run; allocations starting and draining;
// nodes changing, leaving and coming back; progress arriving; hours
// passing): one keeps its entries across rounds (incremental.go), the
// other classifies every job afresh each round. Every round both must hand
// the policy the same snapshot, get the same decision, and leave the same
// records.
func TestIncrementalRoundMatchesFullRebuild(t *testing.T) {
	for _, pol := range []string{"fifo", "tiresias-las", "lucid"} {
		for seed := int64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", pol, seed), func(t *testing.T) {
				runTwins(t, pol, seed, 120)
			})
		}
	}
}

// recorder keeps a copy of every snapshot a policy saw and its decisions.
type recorder struct {
	policy.Policy
	t     *testing.T
	snaps []snapCopy
	decs  []policy.Decision
	// seen is each job as a tracked snapshot last listed it, with its
	// stamps (checkStamps)
	seen map[string]seenJob
	// checked counts the jobs checkStamps compared, progressed those of
	// them whose ProgressGen alone moved
	checked, progressed int
	// learnt is each finished job as fed after a round (learn.go), in
	// order: the full twin, whose entries are new every round, must feed
	// them as the incremental one does; prepares counts Prepare calls
	learnt   []policy.Job
	prepares int
}

// ObserveFinished records a finished job fed after a round and passes
// it on.
func (r *recorder) ObserveFinished(j *policy.Job) {
	r.learnt = append(r.learnt, *j)
	if fo, ok := r.Policy.(policy.FinishObserver); ok {
		fo.ObserveFinished(j)
	}
}

// Prepare counts and passes on (policy.Preparer).
func (r *recorder) Prepare() {
	r.prepares++
	if p, ok := r.Policy.(policy.Preparer); ok {
		p.Prepare()
	}
}

// seenJob is a job as a tracked snapshot listed it, and its stamps.
type seenJob struct {
	gen, pgen uint64
	job       policy.Job
}

// snapCopy is a snapshot as it was when decided (kept views change
// later); Gen and Links are left out: only the incremental side tracks,
// and jobs' service is folded in (Job.ServiceAt).
type snapCopy struct {
	Now   float64
	Nodes []policy.Node
	Jobs  []policy.Job
}

func (r *recorder) Decide(s *policy.Snapshot) policy.Decision {
	r.checkStamps(s)
	c := snapCopy{Now: s.Now}
	for _, n := range s.Cluster.Nodes {
		n.GPUs = slices.Clone(n.GPUs)
		c.Nodes = append(c.Nodes, n)
	}
	for _, j := range s.Jobs {
		cj := *j
		// service as the policy reads it: the incremental side's accrues
		// from when it was stamped, the full side's is summed each round
		cj.Attained, cj.Executed = j.ServiceAt(s.Now)
		cj.Accrual = policy.Accrual{}
		cj.Placement.Slots = slices.Clone(j.Placement.Slots)
		cj.Progress = slices.Clone(j.Progress)
		c.Jobs = append(c.Jobs, cj)
	}
	d := r.Policy.Decide(s)
	kept := d // Waiting and Ranking are the policy's again at its next Decide (JobGen)
	kept.Waiting, kept.Ranking = slices.Clone(d.Waiting), slices.Clone(d.Ranking)
	// empty and nil alike: a tracked decision reuses emptied storage
	if len(kept.Waiting) == 0 {
		kept.Waiting = nil
	}
	if len(kept.Ranking) == 0 {
		kept.Ranking = nil
	}
	if len(kept.Preempts) == 0 {
		kept.Preempts = nil
	}
	if len(kept.Starts) == 0 {
		kept.Starts = nil
	}
	r.snaps, r.decs = append(r.snaps, c), append(r.decs, kept)
	return d
}

// checkStamps holds a tracked snapshot to its stamps' promise: a job
// whose JobGen stamp is the one it had when last listed (by any class's
// snapshot: stamps come from one counter) has the same fields but its
// service (which accrues), and its progress too unless its ProgressGen
// stamp moved.
func (r *recorder) checkStamps(s *policy.Snapshot) {
	r.t.Helper()
	if !s.JobsTracked() {
		return
	}
	if r.seen == nil {
		r.seen = map[string]seenJob{}
	}
	for i, j := range s.Jobs {
		now := seenJob{gen: s.JobGen[i], job: *j}
		now.job.Placement.Slots, now.job.Progress = slices.Clone(j.Placement.Slots), slices.Clone(j.Progress)
		if s.ProgressTracked() {
			now.pgen = s.ProgressGen[i]
		}
		was, ok := r.seen[j.ID]
		r.seen[j.ID] = now
		if !ok || now.gen == 0 || now.gen != was.gen {
			continue
		}
		r.checked++
		w := was.job
		if j.Submit != w.Submit || j.State != w.State || j.Workers != w.Workers || j.Fraction != w.Fraction ||
			j.MemMiB != w.MemMiB || j.LastStart != w.LastStart || !slices.Equal(j.Placement.Slots, w.Placement.Slots) {
			r.t.Fatalf("job %s changed under JobGen stamp %d:\n%+v\nwas\n%+v", j.ID, now.gen, *j, w)
		}
		if (!s.ProgressTracked() || now.pgen == was.pgen) && !slices.Equal(j.Progress, w.Progress) {
			r.t.Fatalf("job %s: progress changed under stamps %d, %d", j.ID, now.gen, now.pgen)
		}
		if now.pgen != was.pgen {
			r.progressed++
		}
	}
}

// twin is one of the two schedulers, with its clock.
type twin struct {
	s   *Scheduler
	rec *recorder
}

// newTwin builds a scheduler on a fake Nomad that answers a job read
// from jobs (what the test last put in the mirrors) and every other call
// with an empty object.
func newTwin(t *testing.T, pol string, full bool, clock *time.Time, jobs map[string]*api.Job) *twin {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Nomad-Index", "1")
		if id, ok := strings.CutPrefix(r.URL.Path, "/v1/job/"); ok && r.Method == http.MethodGet && jobs[id] != nil {
			_ = json.NewEncoder(w).Encode(jobs[id])
			return
		}
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Token: "t", Policy: pol, ReconcileEvery: 10000 * time.Hour}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Policy: s.pol, t: t}
	s.pol = rec
	s.now = func() time.Time { return *clock }
	s.fullEvery = 1 << 30
	if full {
		s.fullEvery = 0
	}
	m := newMirror()
	m.pools["default"] = true
	s.st, s.mirror, s.reconciledAt, s.poolsChecked = newState(), m, *clock, *clock
	return &twin{s: s, rec: rec}
}

// world is the random cluster both twins mirror.
type twinWorld struct {
	t      *testing.T
	rnd    *rand.Rand
	clock  *time.Time
	twins  [2]*twin
	index  uint64
	nextID int
	seen   map[string][2]int // admissions and preemptions already reflected
	nodes  map[string]*nodeInfo
	gone   map[string]*nodeInfo // nodes that left, to come back
	full   map[string]*api.Job  // the fake Nomad's full jobs
	// what happened, to check the run exercised something
	decisions, admits, preempts, learnt int
}

func runTwins(t *testing.T, pol string, seed int64, steps int) {
	clock := time.Unix(1_700_000_000, 0)
	w := &twinWorld{t: t, rnd: rand.New(rand.NewSource(seed)), clock: &clock, index: 10,
		seen: map[string][2]int{}, full: map[string]*api.Job{}, nodes: map[string]*nodeInfo{}, gone: map[string]*nodeInfo{}}
	w.twins = [2]*twin{newTwin(t, pol, false, &clock, w.full), newTwin(t, pol, true, &clock, w.full)}
	for n := 0; n < 4; n++ {
		dc := "dc1"
		if n == 3 {
			dc = "dc2"
		}
		id := fmt.Sprintf("node-%d", n)
		info := &nodeInfo{ID: id, Name: id, Pool: "default", Datacenter: dc}
		for g := 0; g < 2; g++ {
			info.GPUs = append(info.GPUs, nodeGPU{Index: g, UUID: fmt.Sprintf("GPU-%d-%d", n, g), Model: "A100", MemoryMiB: 40960, FreeFraction: 1, FreeMemMiB: 40960})
		}
		w.putNode(info)
	}
	for i := 0; i < 6; i++ {
		w.submit()
	}
	for step := 0; step < steps; step++ {
		for n := w.rnd.Intn(4); n > 0; n-- {
			w.change()
		}
		adv := time.Duration(1+w.rnd.Intn(40)) * time.Second
		if w.rnd.Intn(25) == 0 {
			adv = 40 * time.Minute // finished jobs age out
		}
		clock = clock.Add(adv)
		for i, tw := range w.twins {
			if _, err := tw.s.round(); err != nil {
				t.Fatalf("step %d, twin %d: %v", step, i, err)
			}
		}
		w.compare(step)
		w.reflect()
	}
	t.Logf("%d decisions, %d admissions, %d preemptions reflected, %d finished jobs learnt, %d jobs", w.decisions, w.admits, w.preempts, w.learnt, w.nextID)
	if w.decisions == 0 || w.admits == 0 || w.learnt == 0 {
		t.Fatal("nothing was decided, admitted or learnt: the test exercises nothing")
	}
	inc := w.twins[0].rec
	t.Logf("stamps held for %d listings, %d of them with progress alone moved", inc.checked, inc.progressed)
	if inc.checked == 0 || inc.progressed == 0 {
		t.Fatal("no job was listed again under its stamp, or none with progress alone moved: the stamps go unchecked")
	}
}

// compare checks the twins decided alike this round.
func (w *twinWorld) compare(step int) {
	a, b := w.twins[0], w.twins[1]
	if len(a.rec.snaps) != len(b.rec.snaps) {
		w.t.Fatalf("step %d: %d decisions incremental, %d full", step, len(a.rec.snaps), len(b.rec.snaps))
	}
	for i := range a.rec.snaps {
		if !reflect.DeepEqual(a.rec.snaps[i], b.rec.snaps[i]) {
			w.t.Fatalf("step %d, decision %d: snapshots differ\nincremental %+v\nfull        %+v", step, i, a.rec.snaps[i], b.rec.snaps[i])
		}
		if !reflect.DeepEqual(a.rec.decs[i], b.rec.decs[i]) {
			w.t.Fatalf("step %d, decision %d: decisions differ\nincremental %+v\nfull        %+v", step, i, a.rec.decs[i], b.rec.decs[i])
		}
	}
	if !reflect.DeepEqual(a.s.st, b.s.st) {
		w.t.Fatalf("step %d: states differ\nincremental %s\nfull        %s", step, dumpState(a.s.st), dumpState(b.s.st))
	}
	if !reflect.DeepEqual(a.rec.learnt, b.rec.learnt) || a.rec.prepares != b.rec.prepares {
		w.t.Fatalf("step %d: learnt differ\nincremental %+v (%d prepares)\nfull        %+v (%d)", step, a.rec.learnt, a.rec.prepares, b.rec.learnt, b.rec.prepares)
	}
	w.decisions, w.learnt = w.decisions+len(a.rec.decs), w.learnt+len(a.rec.learnt)
	for _, tw := range w.twins {
		tw.rec.snaps, tw.rec.decs, tw.rec.learnt = nil, nil, nil
	}
}

func dumpState(st *state) string {
	out := ""
	for _, id := range slices.Sorted(maps.Keys(st.Jobs)) {
		out += fmt.Sprintf("\n  %s %+v", id, *st.Jobs[id])
	}
	return out
}

// each applies one change to both twins' mirrors and caches.
func (w *twinWorld) each(f func(s *Scheduler, m *mirror)) {
	for _, tw := range w.twins {
		f(tw.s, tw.s.mirror)
	}
}

func (w *twinWorld) putNode(info *nodeInfo) {
	w.nodes[info.ID] = info
	w.each(func(_ *Scheduler, m *mirror) {
		c := *info
		c.GPUs = slices.Clone(info.GPUs)
		m.nodes[info.ID], m.sets = &c, nil
	})
}

// putJob puts a copy of j into both mirrors; a new version (jobIndex)
// is cached as its event would be.
func (w *twinWorld) putJob(j jobStub, workers int, dcs []string) {
	w.index++
	j.ModifyIndex = w.index
	w.each(func(s *Scheduler, m *mirror) {
		c := j
		c.Meta = maps.Clone(j.Meta)
		m.putJob(&c)
		m.index = w.index
		if workers > 0 {
			cfgs := make([]map[string]any, workers)
			for i := range cfgs {
				cfgs[i] = map[string]any{"command": "x", "gpus": 1}
			}
			job := testJob(j.ID, cfgs...)
			job.Datacenters = dcs
			job.JobModifyIndex = &c.JobModifyIndex
			s.cacheJob(job)
			w.full[j.ID] = job
		}
	})
}

func (w *twinWorld) putAlloc(a api.AllocationListStub) {
	w.index++
	a.ModifyIndex = w.index
	w.each(func(_ *Scheduler, m *mirror) {
		c := a
		m.putAlloc(&c)
	})
}

// jobsWhere lists the first twin's mirror jobs matching ok, sorted.
func (w *twinWorld) jobsWhere(ok func(*jobStub) bool) []*jobStub {
	var out []*jobStub
	for _, id := range slices.Sorted(maps.Keys(w.twins[0].s.mirror.jobs)) {
		if j := w.twins[0].s.mirror.jobs[id]; ok(j) {
			out = append(out, j)
		}
	}
	return out
}

func (w *twinWorld) pick(js []*jobStub) *jobStub {
	if len(js) == 0 {
		return nil
	}
	return js[w.rnd.Intn(len(js))]
}

func (w *twinWorld) submit() {
	w.nextID++
	id := fmt.Sprintf("job-%03d", w.nextID)
	dcs := []string{"dc1", "dc2"}
	if w.rnd.Intn(4) == 0 {
		dcs = []string{"dc2"}
	}
	w.index++
	j := jobStub{ID: id, Namespace: "default", Type: "batch", Status: "pending", NodePool: "caravan-queue",
		JobModifyIndex: w.index, CreateIndex: w.index, SubmitTime: w.clock.UnixNano(),
		Meta: map[string]string{MetaModel: []string{"resnet50", "bert"}[w.rnd.Intn(2)]}}
	w.putJob(j, 1+w.rnd.Intn(2), dcs)
}

// change makes one random change to the cluster.
func (w *twinWorld) change() {
	running := func(j *jobStub) bool { return j.NodePool == "default" && j.Status != "dead" && !j.Stop }
	switch w.rnd.Intn(14) {
	case 0, 1:
		w.submit()
	case 2: // a running job finishes
		if j := w.pick(w.jobsWhere(running)); j != nil {
			w.finish(j)
		}
	case 3: // allocations move on: starting ones run, draining ones stop
		as := w.twins[0].s.mirror.allocs
		for _, id := range slices.Sorted(maps.Keys(as)) {
			a := *as[id]
			switch {
			case a.DesiredStatus == "run" && a.ClientStatus == "pending":
				a.ClientStatus = "running"
			case a.DesiredStatus != "run" && live(&a):
				a.ClientStatus = "complete"
			default:
				continue
			}
			w.putAlloc(a)
			break
		}
	case 4: // the user stops a job
		if j := w.pick(w.jobsWhere(func(j *jobStub) bool { return !j.Stop })); j != nil {
			c := *j
			c.Stop, c.Status = true, "dead"
			w.putJob(c, 0, nil)
		}
	case 5: // the job is purged
		if j := w.pick(w.jobsWhere(func(j *jobStub) bool { return j.Stop || j.Status == "dead" })); j != nil {
			w.each(func(_ *Scheduler, m *mirror) { m.dropJob(j.ID) })
		}
	case 6: // a finished job is run again
		if j := w.pick(w.jobsWhere(func(j *jobStub) bool { return j.Status == "dead" && !j.Stop })); j != nil {
			c := *j
			w.index++
			c.NodePool, c.Status, c.JobModifyIndex, c.SubmitTime = "caravan-queue", "pending", w.index, w.clock.UnixNano()
			c.Meta = map[string]string{MetaModel: j.Meta[MetaModel]}
			w.putJob(c, 1, []string{"dc1", "dc2"})
		}
	case 7: // a node's fingerprint moves
		id := fmt.Sprintf("node-%d", w.rnd.Intn(4))
		if n := w.nodes[id]; n != nil {
			c := *n
			c.GPUs = slices.Clone(n.GPUs)
			g := w.rnd.Intn(len(c.GPUs))
			c.GPUs[g].FreeFraction = float64(w.rnd.Intn(3)) / 2
			w.putNode(&c)
		}
	case 8: // a node leaves or comes back
		id := fmt.Sprintf("node-%d", w.rnd.Intn(4))
		if n := w.gone[id]; n != nil {
			delete(w.gone, id)
			w.putNode(n)
		} else if n := w.nodes[id]; n != nil && len(w.nodes) > 2 {
			w.gone[id] = n
			delete(w.nodes, id)
			w.each(func(_ *Scheduler, m *mirror) { delete(m.nodes, id); m.sets = nil })
		}
	case 9: // progress arrives for a job
		if j := w.pick(w.jobsWhere(running)); j != nil {
			step := float64(w.rnd.Intn(1000))
			w.each(func(s *Scheduler, _ *mirror) {
				b := s.progress
				b.mu.Lock()
				defer b.mu.Unlock()
				if b.jobs[j.ID] == nil {
					b.jobs[j.ID] = &progress{}
				}
				b.jobs[j.ID].add([]policy.ProgressPoint{{Step: step, Loss: 1 / (1 + step)}}, unix(*w.clock), 1)
				if b.changed == nil {
					b.changed = map[string]bool{}
				}
				b.changed[j.ID] = true
			})
		}
	case 11: // a job whose full job cannot be read (read again every round)
		w.index++
		w.nextID++
		w.putJob(jobStub{ID: fmt.Sprintf("job-%03d", w.nextID), Namespace: "default", Type: "batch", Status: "pending",
			NodePool: "caravan-queue", JobModifyIndex: w.index, CreateIndex: w.index, SubmitTime: w.clock.UnixNano()}, 0, nil)
	case 13: // an unreadable job becomes readable, its stub unchanged
		if j := w.pick(w.jobsWhere(func(j *jobStub) bool { return w.full[j.ID] == nil && !j.Stop })); j != nil {
			job := testJob(j.ID, map[string]any{"command": "x", "gpus": 1})
			idx := j.JobModifyIndex
			job.JobModifyIndex = &idx
			w.full[j.ID] = job
		}
	case 12: // a running job's placement meta is corrupted
		if j := w.pick(w.jobsWhere(running)); j != nil {
			c := *j
			c.Meta = maps.Clone(j.Meta)
			c.Meta[MetaPlacement] = "garbage"
			w.putJob(c, 0, nil)
		}
	case 10: // an allocation of a running job fails to start: pending again
		if j := w.pick(w.jobsWhere(running)); j != nil {
			for _, a := range w.twins[0].s.mirror.byJob[j.ID] {
				if a.DesiredStatus == "run" && a.ClientStatus == "running" {
					c := *a
					c.ClientStatus = "pending"
					w.putAlloc(c)
					break
				}
			}
		}
	}
}

// finish ends a running job: its allocations complete, the job is dead.
func (w *twinWorld) finish(j *jobStub) {
	for _, a := range w.twins[0].s.mirror.byJob[j.ID] {
		if live(a) {
			c := *a
			c.ClientStatus = "complete"
			c.TaskStates = map[string]*api.TaskState{"work": {FinishedAt: w.clock.Add(-time.Second)}}
			w.putAlloc(c)
		}
	}
	c := *j
	c.Status = "dead"
	w.putJob(c, 0, nil)
}

// reflect makes Nomad show what the schedulers wrote: admitted jobs move
// into the real pool with allocations, preempted ones back to the queue
// with their allocations told to stop.
func (w *twinWorld) reflect() {
	st := w.twins[0].s.st
	for _, id := range slices.Sorted(maps.Keys(st.Jobs)) {
		r, j := st.Jobs[id], w.twins[0].s.mirror.jobs[id]
		if j == nil {
			continue
		}
		seen := w.seen[id]
		if w.rnd.Intn(3) == 0 {
			continue // Nomad shows it a round later
		}
		switch {
		case r.Preemptions > seen[1] && j.NodePool == "default":
			w.preempted(j)
			w.preempts++
		case r.Admissions > seen[0] && j.NodePool == "caravan-queue":
			w.admitted(j, r)
			w.admits++
		}
		w.seen[id] = [2]int{r.Admissions, r.Preemptions}
	}
}

func (w *twinWorld) admitted(j *jobStub, r *record) {
	ts, err := decodePlacement(r.Placement)
	if err != nil {
		w.t.Fatal(err)
	}
	c := *j
	w.index++
	c.NodePool, c.Status, c.JobModifyIndex, c.SubmitTime = "default", "running", w.index, w.clock.UnixNano()
	c.Meta = maps.Clone(j.Meta)
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	c.Meta[MetaAdmitted], c.Meta[MetaPlacement] = "now", r.Placement
	if w.rnd.Intn(5) == 0 {
		c.Status = "pending" // Nomad has not placed it (yet)
	}
	w.putJob(c, len(ts), []string{"dc1", "dc2"})
	if c.Status == "pending" {
		return
	}
	for i, t := range ts {
		status := "running"
		if w.rnd.Intn(3) == 0 {
			status = "pending"
		}
		w.putAlloc(api.AllocationListStub{ID: fmt.Sprintf("%s-%d-%d", j.ID, w.index, i), JobID: j.ID, NodeID: t.NodeID,
			TaskGroup: t.Worker.Group, DesiredStatus: "run", ClientStatus: status, CreateIndex: w.index})
	}
}

func (w *twinWorld) preempted(j *jobStub) {
	for _, a := range w.twins[0].s.mirror.byJob[j.ID] {
		if a.DesiredStatus == "run" && live(a) {
			c := *a
			c.DesiredStatus = "stop"
			w.putAlloc(c)
		}
	}
	c := *j
	w.index++
	c.NodePool, c.Status, c.JobModifyIndex, c.SubmitTime = "caravan-queue", "pending", w.index, w.clock.UnixNano()
	c.Meta = maps.Clone(j.Meta)
	delete(c.Meta, MetaAdmitted)
	delete(c.Meta, MetaPlacement)
	workers := 1
	if cj := w.twins[0].s.jobs[j.ID]; cj != nil && cj.err == nil {
		workers = len(cj.gang.Workers)
	}
	w.putJob(c, workers, []string{"dc1", "dc2"})
}

// The queue view's gap stays 250 ms for small queues and grows with the
// jobs past 2,500, so a 10,000-job queue builds a view at most once a
// second (and at least every two).
func TestViewGapGrowsWithTheJobs(t *testing.T) {
	for _, c := range []struct {
		jobs       int
		gap, every time.Duration
	}{{0, 250 * time.Millisecond, time.Second}, {2500, 250 * time.Millisecond, time.Second},
		{10000, time.Second, 2 * time.Second}} {
		if gap, every := viewGapFor(c.jobs); gap != c.gap || every != c.every {
			t.Errorf("%d jobs: gap %s every %s, want %s and %s", c.jobs, gap, every, c.gap, c.every)
		}
	}
}

// The round hands viewDue the policy's own Ranking storage, which the
// policy's next Decide rewrites in place: a ranking that changed between
// two rounds must still read as a change, so viewDue keeps a copy.
func TestViewDueSeesARankingRewrittenInPlace(t *testing.T) {
	s := &Scheduler{inc: &incr{marked: map[string]bool{}}}
	at := time.Unix(1000, 0)
	storage := []policy.Rank{{JobID: "a"}, {JobID: "b"}}
	if !s.viewDue(true, 2, storage, at, false) {
		t.Fatal("a full round's view is not due")
	}
	_, every := viewGapFor(2)
	at = at.Add(every / 2) // past the gap, before the view is due anyway
	if s.viewDue(false, 2, storage, at, false) {
		t.Fatal("a view is due though nothing changed")
	}
	storage[0], storage[1] = storage[1], storage[0] // the next Decide, in place
	if !s.viewDue(false, 2, storage, at.Add(time.Millisecond), false) {
		t.Fatal("a ranking rewritten in place did not make the view due")
	}
	if got := s.inc.view.ranking; len(got) != 2 || got[0].JobID != "b" || &got[0] == &storage[0] {
		t.Fatalf("kept ranking %v: want an own copy of [b a]", got)
	}
}

// Between two queue views a round decides without reasons (leanRound):
// no view can be due before the gap since the last. A lean round's
// ranking counts as moved, and is neither compared nor copied (100,000
// entries at scale), so a round is called at the gap's end, and that
// one decides with reasons and builds the view.
func TestLeanRoundsBetweenViews(t *testing.T) {
	s := &Scheduler{inc: &incr{marked: map[string]bool{}}, wake: make(chan struct{}, 1)}
	const jobs = 50000
	gap, _ := viewGapFor(jobs)
	at := time.Unix(1000, 0)
	ranking := []policy.Rank{{JobID: "a"}, {JobID: "b"}}
	if s.leanRound(false, jobs, at) {
		t.Fatal("a round before any view decides without reasons")
	}
	if !s.viewDue(true, jobs, ranking, at, false) {
		t.Fatal("a full round's view is not due")
	}
	mid := at.Add(gap / 2)
	if !s.leanRound(false, jobs, mid) || s.leanRound(true, jobs, mid) {
		t.Fatal("inside the gap, an incremental round must be lean and a full one not")
	}
	// at scale a lean decision may still rank every job: not copied
	moved := []policy.Rank{{JobID: "b"}, {JobID: "a"}}
	if s.viewDue(false, jobs, moved, mid, true) {
		t.Fatal("a view is due in a lean round")
	}
	if vm := s.inc.view; !vm.pending || !vm.poked || !slices.Equal(vm.ranking, ranking) {
		t.Fatalf("a lean round left the view %+v: want a change pending, a round called at the gap's end, the last view's ranking kept", vm)
	}
	end := at.Add(gap)
	if s.leanRound(false, jobs, end) {
		t.Fatal("the round at the gap's end decides without reasons")
	}
	if !s.viewDue(false, jobs, ranking, end, false) {
		t.Fatal("the round at the gap's end built no view after a lean round")
	}
}
