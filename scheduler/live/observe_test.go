package live

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/hashicorp/nomad/api"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fakeNomad serves the lists a full reconcile reads, at index 100.
type fakeNomad struct {
	mu        sync.Mutex
	jobs      []*jobStub
	nodes     []*api.Node
	evals     []*evalStub // pending
	requests  atomic.Int64
	nodeReads atomic.Int64
	gate      chan struct{} // when set, the job list waits for it to close
}

func (f *fakeNomad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.mu.Lock()
	if gate := f.gate; gate != nil && r.URL.Path == "/v1/jobs" {
		f.mu.Unlock()
		<-gate
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	w.Header().Set("X-Nomad-Index", "100")
	var body any = []any{}
	switch {
	case r.URL.Path == "/v1/jobs":
		body = f.jobs
	case r.URL.Path == "/v1/evaluations" && r.URL.Query().Get("status") == "pending":
		body = f.evals
	case r.URL.Path == "/v1/nodes":
		var stubs []*api.NodeListStub
		for _, n := range f.nodes {
			stubs = append(stubs, &api.NodeListStub{ID: n.ID, Name: n.Name, NodePool: n.NodePool, Status: n.Status,
				ModifyIndex: n.ModifyIndex})
		}
		body = stubs
	case strings.HasPrefix(r.URL.Path, "/v1/node/") && r.URL.Path != "/v1/node/pools":
		f.nodeReads.Add(1)
		for _, n := range f.nodes {
			if n.ID == strings.TrimPrefix(r.URL.Path, "/v1/node/") {
				body = n
			}
		}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// fakeNode is a ready caravan node with gpus GPUs.
func fakeNode(id string, gpus int, index uint64) *api.Node {
	attrs := map[string]string{gpuAttr + "count": strconv.Itoa(gpus)}
	for i := 0; i < gpus; i++ {
		attrs[fmt.Sprintf("%s%d.uuid", gpuAttr, i)] = fmt.Sprintf("GPU-%s-%d", id, i)
		attrs[fmt.Sprintf("%s%d.memory_mib", gpuAttr, i)] = "1024"
	}
	return &api.Node{ID: id, Name: id, NodePool: "default", Status: "ready", SchedulingEligibility: "eligible",
		ModifyIndex: index, Drivers: map[string]*api.DriverInfo{"caravan": {Attributes: attrs}}}
}

// A full reconcile reads only the nodes whose ModifyIndex changed since
// the mirror last read them; the rest are the same nodes.
func TestReconcileReadsOnlyChangedNodes(t *testing.T) {
	s, f := observeScheduler(t)
	f.nodes = []*api.Node{fakeNode("n1", 2, 10), fakeNode("n2", 2, 11), fakeNode("n3", 2, 12)}
	reconcile := func() *world {
		t.Helper()
		s.needFull = true
		w, err := s.observe()
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := reconcile(); f.nodeReads.Load() != 3 || len(w.nodes) != 3 {
		t.Fatalf("first reconcile: %d node reads, %d nodes", f.nodeReads.Load(), len(w.nodes))
	}
	if w := reconcile(); f.nodeReads.Load() != 3 || len(w.nodes) != 3 {
		t.Fatalf("nothing changed: %d node reads in all, %d nodes", f.nodeReads.Load(), len(w.nodes))
	}
	f.mu.Lock()
	f.nodes[1] = fakeNode("n2", 4, 20)
	f.mu.Unlock()
	w := reconcile()
	if f.nodeReads.Load() != 4 || len(w.nodes["n2"].GPUs) != 4 || len(w.nodes["n1"].GPUs) != 2 {
		t.Fatalf("one node changed: %d node reads in all, n2 has %d GPUs", f.nodeReads.Load(), len(w.nodes["n2"].GPUs))
	}
	// A node the stream updated is at its new index: not read again.
	ev := mkEvent(t, api.TopicNode, "NodeRegistration", 130, map[string]any{"Node": fakeNode("n3", 1, 130)})
	s.feed.push([]event{ev}, false)
	if w, err := s.observe(); err != nil || len(w.nodes["n3"].GPUs) != 1 {
		t.Fatalf("node event: %v", err)
	}
	f.mu.Lock()
	f.nodes[2] = fakeNode("n3", 1, 130)
	f.mu.Unlock()
	if w := reconcile(); f.nodeReads.Load() != 4 || len(w.nodes["n3"].GPUs) != 1 {
		t.Fatalf("after the event: %d node reads in all", f.nodeReads.Load())
	}
}

func observeScheduler(t *testing.T) (*Scheduler, *fakeNomad) {
	t.Helper()
	f := &fakeNomad{jobs: []*jobStub{{ID: "a", Namespace: "default", Type: "batch", NodePool: "caravan-queue", ModifyIndex: 90}}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Token: "t", ReconcileEvery: time.Hour}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

func jobIDs(w *world) []string {
	var ids []string
	for _, j := range w.jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

// A round reads Nomad only when it must: the first, after a broken stream
// and when the period is up; otherwise it applies events and asks nothing.
func TestObserveReadsNomadOnlyToReconcile(t *testing.T) {
	s, f := observeScheduler(t)
	w, err := s.observe()
	if err != nil || len(w.jobs) != 1 {
		t.Fatalf("first round: %v %v", jobIDs(w), err)
	}
	calls := f.requests.Load()
	// A job Nomad has but whose event is missed, and an event for another.
	f.mu.Lock()
	f.jobs = append(f.jobs, &jobStub{ID: "missed", Namespace: "default", Type: "batch", NodePool: "caravan-queue", ModifyIndex: 101})
	f.mu.Unlock()
	s.feed.push([]event{jobEvent(t, "b", "caravan-queue", "pending", 102, false)}, false)
	w, err = s.observe()
	if err != nil || f.requests.Load() != calls {
		t.Fatalf("an incremental round made %d API calls (%v)", f.requests.Load()-calls, err)
	}
	if got := jobIDs(w); len(got) != 2 || got[1] != "b" {
		t.Fatalf("after the event: %v", got)
	}
	if n := count(s.metrics.eventsApplied); n != 1 {
		t.Fatalf("events applied = %v", n)
	}
	// The periodic reconcile heals the missed event (its round waits for
	// the read here; TestPeriodicReadRunsBesideTheRounds does not).
	s.reconciledAt = time.Now().Add(-2 * time.Hour)
	s.waitBeside = true
	if w, _ = s.observe(); len(w.jobs) != 2 || jobIDs(w)[1] != "missed" {
		t.Fatalf("after the periodic reconcile: %v", jobIDs(w))
	}
	// So does a broken stream.
	s.feed.push(nil, true)
	before := f.requests.Load()
	if _, err := s.observe(); err != nil || f.requests.Load() == before {
		t.Fatalf("a broken stream did not reconcile (%v)", err)
	}
	if n := count(s.metrics.reconciles); n != 3 {
		t.Fatalf("full reconciles = %v, want 3", n)
	}
}

// The periodic full read runs beside the rounds: a round does not wait
// for it, events keep coming meanwhile, and the round after it ends swaps
// in the new mirror with those events applied on top.
func TestPeriodicReadRunsBesideTheRounds(t *testing.T) {
	s, f := observeScheduler(t)
	if _, err := s.observe(); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	f.mu.Lock()
	f.gate = gate
	f.jobs = append(f.jobs, &jobStub{ID: "missed", Namespace: "default", Type: "batch", NodePool: "caravan-queue", ModifyIndex: 95})
	f.mu.Unlock()
	s.reconciledAt = time.Now().Add(-2 * time.Hour)
	w, err := s.observe() // starts the read, which waits at the gate
	if err != nil || s.bg == nil || strings.Join(jobIDs(w), ",") != "a" {
		t.Fatalf("round with the read in flight: %v, %v, read in flight %v", jobIDs(w), err, s.bg != nil)
	}
	s.feed.push([]event{jobEvent(t, "b", "caravan-queue", "pending", 102, false)}, false)
	if w, err = s.observe(); err != nil || strings.Join(jobIDs(w), ",") != "a,b" || s.bg == nil {
		t.Fatalf("event during the read: %v, %v", jobIDs(w), err)
	}
	close(gate)
	<-s.bg.done
	w, err = s.observe()
	got := jobIDs(w)
	slices.Sort(got)
	if err != nil || strings.Join(got, ",") != "a,b,missed" || s.bg != nil {
		t.Fatalf("after the read: %v, %v", got, err)
	}
	if n := count(s.metrics.reconciles); n != 2 || time.Since(s.reconciledAt) > time.Hour {
		t.Fatalf("full reconciles = %v, reconciled at %v", n, s.reconciledAt)
	}
}

// A round after the scheduler's own write waits for that write's event.
func TestObserveWaitsForItsOwnWrites(t *testing.T) {
	s, f := observeScheduler(t)
	if _, err := s.observe(); err != nil {
		t.Fatal(err)
	}
	calls := f.requests.Load()
	s.noteWrite(110)
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.feed.push([]event{jobEvent(t, "a", "default", "pending", 110, false)}, false)
	}()
	w, err := s.observe()
	if err != nil || f.requests.Load() != calls {
		t.Fatalf("catching up made %d API calls (%v)", f.requests.Load()-calls, err)
	}
	if len(w.jobs) != 0 {
		t.Fatalf("the admitted job (now in pool default, no admitted meta) should not be managed: %v", jobIDs(w))
	}
}

func count(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// A full read that fails (Nomad down) is tried again next round, even
// though the broken stream's mark was taken with the failed attempt.
func TestFailedReconcileIsRetried(t *testing.T) {
	s, f := observeScheduler(t)
	if _, err := s.observe(); err != nil {
		t.Fatal(err)
	}
	good := s.api
	down, err := api.NewClient(&api.Config{Address: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	s.api = down
	s.feed.push(nil, true)
	if _, err := s.observe(); err == nil {
		t.Fatal("a full read against a stopped Nomad succeeded")
	}
	s.api = good
	before := f.requests.Load()
	if _, err := s.observe(); err != nil || f.requests.Load() == before {
		t.Fatalf("the failed full read was not retried (%v)", err)
	}
}

// A queued job whose previous allocations still run or drain is not
// admitted (nor read from Nomad) until they stopped.
func TestNoAdmissionWhilePreviousAllocationsLive(t *testing.T) {
	s := testScheduler(t)
	for _, a := range []jobAllocs{{running: 1}, {starting: 1}, {draining: 1}} {
		e := &entry{stub: &jobStub{ID: "j"}, rec: &record{}, allocs: a, phase: phaseQueued}
		if _, why := s.start(e, policy.Placement{}, &world{}, &gpuBook{}, time.Now()); why != "waiting for its previous allocations to stop" {
			t.Fatalf("%+v: %q", a, why)
		}
	}
}

// The policy sees a preempted job's draining GPU as free (so it does not
// preempt another job for the same waiting one), while the GPU book keeps
// it held until the allocation has stopped.
func TestPolicySeesDrainingGPUsFree(t *testing.T) {
	nodes := map[string]*nodeInfo{"n1": {ID: "n1", GPUs: []nodeGPU{{Index: 0, UUID: "g0", MemoryMiB: 100, FreeFraction: 1, FreeMemMiB: 100}}}}
	held := []target{{NodeID: "n1", GPU: 0, Fraction: 1}}
	e := &entry{stub: &jobStub{ID: "victim"}, rec: &record{}, phase: phaseQueued, held: held, allocs: jobAllocs{draining: 1}}
	l := newGPUBook(nodes, []*entry{e}, nil)
	if l.fits(held) {
		t.Fatal("the book offered a GPU a draining job still holds")
	}
	snap := (&Scheduler{}).snapshot(l, l.nodeIDs(), []*entry{e}, 5)
	if g := snap.Cluster.Nodes[0].GPUs[0]; g.UsedFraction != 0 || g.UsedMemoryMiB != 0 {
		t.Fatalf("the policy sees the draining GPU used: %+v", g)
	}
	e.phase = phaseRunning
	if g := (&Scheduler{}).snapshot(l, l.nodeIDs(), []*entry{e}, 5).Cluster.Nodes[0].GPUs[0]; g.UsedFraction != 1 {
		t.Fatalf("a running job's GPU shows free: %+v", g)
	}
}

// A job naming a pool the mirror lacks makes the round list pools again,
// but the jobs are checked for one at most every poolsEvery.
func TestObservePoolsListsAMissingPoolAtMostEveryPoolsEvery(t *testing.T) {
	var lists atomic.Int32
	s := schedulerOn(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/node/pools" {
			t.Errorf("unexpected call %s", r.URL.Path)
		}
		lists.Add(1)
		w.Header().Set("X-Nomad-Index", "7")
		_, _ = w.Write([]byte(`[{"Name":"default"},{"Name":"late"}]`))
	})
	clock := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { return clock }
	s.mirror = newMirror()
	s.mirror.pools["default"] = true
	s.poolsChecked = clock
	s.mirror.jobs["j"] = &jobStub{ID: "j", Type: "batch", Status: "pending", NodePool: s.cfg.QueuePool, Meta: map[string]string{MetaPool: "late"}}

	s.observePools() // checked just now
	clock = clock.Add(poolsEvery)
	s.observePools()
	if lists.Load() != 1 || !s.mirror.pools["late"] {
		t.Fatalf("after poolsEvery: %d lists, pools %v; want one list that found \"late\"", lists.Load(), s.mirror.pools)
	}
	s.mirror.jobs["k"] = &jobStub{ID: "k", Type: "batch", Status: "pending", NodePool: s.cfg.QueuePool, Meta: map[string]string{MetaPool: "later"}}
	clock = clock.Add(poolsEvery / 2)
	s.observePools()
	if lists.Load() != 1 {
		t.Fatalf("%d lists within poolsEvery of the last check, want 1", lists.Load())
	}
	clock = clock.Add(poolsEvery / 2)
	s.observePools()
	if lists.Load() != 2 {
		t.Fatalf("%d lists once poolsEvery passed with a job naming a missing pool, want 2", lists.Load())
	}
}
