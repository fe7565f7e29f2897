package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/hashicorp/nomad/api"
)

func constraintsOf(cs []*api.Constraint) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.LTarget+" "+c.Operand+" "+c.RTarget)
	}
	return strings.Join(out, "; ")
}

// Parking, admitting and requeueing keep the user's own constraints, and
// only the parked form carries the park constraint and meta.
func TestParkAdmitRequeueRoundTripKeepsUsersConstraints(t *testing.T) {
	job := testJob("j", map[string]any{"command": "x", "gpus": 1}, map[string]any{"command": "x", "gpus": 1})
	job.NodePool = ptr("caravan-queue")
	job.Constraints = []*api.Constraint{api.NewConstraint("${attr.cpu.arch}", "=", "amd64")}
	job.TaskGroups[1].Constraints = []*api.Constraint{api.NewConstraint("${meta.rack}", "is_set", "")}
	userJob, userGroup := constraintsOf(job.Constraints), constraintsOf(job.TaskGroups[1].Constraints)
	g, err := parseGang(job)
	if err != nil {
		t.Fatal(err)
	}
	unparked := (&cachedJob{job: job, gang: g}).fitKey()

	parkJob(job, "default", time.Unix(100, 0))
	parkJob(job, "default", time.Unix(200, 0)) // parking twice parks once
	if *job.NodePool != "default" || job.Meta[MetaParked] != "1970-01-01T00:03:20Z" {
		t.Fatalf("parked: pool %s meta %v", *job.NodePool, job.Meta)
	}
	if got, want := constraintsOf(job.Constraints), userJob+"; "+parkTarget+" is_set "; got != want {
		t.Fatalf("parked job constraints %q, want %q", got, want)
	}
	// The scheduler's own view ignores the park: same eligible nodes, same
	// class key as before.
	if got := strings.Join(eligibleNodes(job, g, "default", poolNodesForTest()), ","); got != "n1" {
		t.Fatalf("parked job eligible on %q, want n1 (amd64 with a rack)", got)
	}
	if parked := (&cachedJob{job: job, gang: g}).fitKey(); parked != unparked {
		t.Fatalf("park changed the fit key:\n%q\n%q", parked, unparked)
	}

	ts, err := resolve(g, policy.Placement{Slots: []policy.Slot{{Node: "n1", GPU: 0, Fraction: 1}, {Node: "n1", GPU: 1, Fraction: 1}}}, testNodes())
	if err != nil {
		t.Fatal(err)
	}
	admitJob(job, "default", ts, rendezvous{}, time.Unix(300, 0))
	if constraintsOf(job.Constraints) != userJob || job.Meta[MetaParked] != "" || job.Meta[MetaAdmitted] == "" {
		t.Fatalf("admitted: constraints %q meta %v", constraintsOf(job.Constraints), job.Meta)
	}
	if got := constraintsOf(job.TaskGroups[1].Constraints); got != userGroup+"; "+nodeIDTarget+" = n1" {
		t.Fatalf("admitted group constraints %q", got)
	}

	requeueJob(job, "caravan-queue", "preempted: test")
	parkJob(job, "default", time.Unix(400, 0))
	unpinJob(job, "caravan-queue", "Nomad could not place it")
	if *job.NodePool != "caravan-queue" || constraintsOf(job.Constraints) != userJob || job.Meta[MetaParked] != "" {
		t.Fatalf("requeued from parked: pool %s constraints %q meta %v", *job.NodePool, constraintsOf(job.Constraints), job.Meta)
	}
	if got := constraintsOf(job.TaskGroups[1].Constraints); got != userGroup {
		t.Fatalf("requeued group constraints %q, want %q", got, userGroup)
	}

	bare := testJob("b", map[string]any{"command": "x", "gpus": 1})
	parkJob(bare, "gpu-a", time.Unix(1, 0))
	unparkJob(bare)
	if bare.Constraints != nil || !reflect.DeepEqual(bare.Meta, map[string]string{}) && bare.Meta != nil {
		t.Fatalf("unparked bare job: constraints %v meta %v", bare.Constraints, bare.Meta)
	}
}

// A parked job is a queued, managed job; an admitted one runs; a job in a
// real pool with no caravan meta is not caravan's.
func TestParkedJobsAreQueued(t *testing.T) {
	s := testScheduler(t)
	parked := jobStub{Type: "batch", NodePool: "default", Status: "pending", Meta: map[string]string{MetaParked: "x"}}
	if s.phaseOf(&parked) != phaseQueued || !s.managed(&parked) || !s.parked(&parked) {
		t.Fatalf("parked job: phase %s managed %v", s.phaseOf(&parked), s.managed(&parked))
	}
	stopped := parked
	stopped.Stop = true
	if s.phaseOf(&stopped) != phaseGone {
		t.Fatalf("stopped parked job: phase %s", s.phaseOf(&stopped))
	}
	// A user who copies a parked job back into the queue: queued, not parked.
	back := jobStub{Type: "batch", NodePool: "caravan-queue", Meta: map[string]string{MetaParked: "x"}}
	if s.phaseOf(&back) != phaseQueued || s.parked(&back) {
		t.Fatal("a job in the queue pool counts as parked")
	}
	admitted := jobStub{Type: "batch", NodePool: "default", Status: "running", Meta: map[string]string{MetaAdmitted: "x", MetaParked: "x"}}
	if s.phaseOf(&admitted) != phaseRunning || s.parked(&admitted) {
		t.Fatalf("admitted job: phase %s", s.phaseOf(&admitted))
	}
	if s.managed(&jobStub{Type: "batch", NodePool: "default"}) {
		t.Fatal("a plain job in the default pool counts as managed")
	}
}

// Only jobs that waited ParkAfter in the queue pool, valid, holding
// nothing, with a real pool, are parked; never twice at a failed version.
func TestParkableOnlyAfterWaiting(t *testing.T) {
	s := testScheduler(t)
	w := &world{nodes: poolNodesForTest(), pools: map[string]bool{"default": true, "gpu-a": true, "empty": true}}
	now := 1000.0
	mk := func(id string, queuedFor float64, meta map[string]string) *entry {
		job := testJob(id, map[string]any{"command": "x", "gpus": 1})
		g, _ := parseGang(job)
		return &entry{stub: &jobStub{ID: id, NodePool: "caravan-queue", Meta: meta, JobModifyIndex: 7}, phase: phaseQueued,
			rec: &record{QueuedSince: now - queuedFor}, job: &cachedJob{job: job, gang: g}}
	}
	old, gpuA := mk("old", 11, nil), mk("gpua", 30, map[string]string{MetaPool: "gpu-a"})
	young, missing := mk("young", 9, nil), mk("missing", 30, map[string]string{MetaPool: "no-such-pool"})
	empty := mk("empty", 30, map[string]string{MetaPool: "empty"}) // a pool without caravan nodes
	invalid, draining, failed := mk("invalid", 30, nil), mk("draining", 30, nil), mk("failed", 30, nil)
	invalid.job.err = errors.New("bad config")
	draining.allocs.draining = 1
	s.parkTried["failed"] = 7
	already := mk("already", 30, map[string]string{MetaParked: "x"})
	already.stub.NodePool = "default"
	admittedNow := mk("admitted-now", 30, nil)
	admittedNow.rec.QueuedSince = 0 // admitted this round
	for _, c := range []struct {
		e    *entry
		pool string
	}{{old, "default"}, {gpuA, "gpu-a"}, {young, ""}, {missing, ""}, {empty, ""}, {invalid, ""}, {draining, ""}, {failed, ""}, {already, ""}, {admittedNow, ""}} {
		pool, ok := s.parkable(w, c.e, now)
		if ok != (c.pool != "") || pool != c.pool && ok {
			t.Errorf("%s: parkable %v into %q, want %q", c.e.stub.ID, ok, pool, c.pool)
		}
	}
	failed.stub.JobModifyIndex = 8 // the user changed it: try again
	if _, ok := s.parkable(w, failed, now); !ok {
		t.Error("a failed park is not retried after the job changed")
	}
	s.cfg.ParkAfter = -1
	s.park(w, []*entry{old}, time.Unix(int64(now), 0)) // would panic on the nil API if it wrote
	if counterValue(s.metrics.parks) != 0 {
		t.Fatal("parked with ParkAfter < 0")
	}
}

// A round starts its parks and returns without waiting for them (a busy
// server made rounds that waited take seconds); the writes run
// admitParallel at once, a job in flight is not parked twice, and a later
// round takes in the results: parks counted, a failed write recorded and
// not retried at that version.
func TestParksRunBesideTheRounds(t *testing.T) {
	gate := make(chan struct{})
	var registers atomic.Int64
	var p peak
	c := clientOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path != "/v1/jobs" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		var req api.JobRegisterRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Job == nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		p.enter()
		defer p.leave()
		<-gate
		registers.Add(1)
		if *req.Job.ID == "j0" {
			http.Error(w, "disk full", http.StatusInternalServerError)
			return
		}
		if *req.Job.NodePool != "default" || req.Job.Meta[MetaParked] == "" {
			http.Error(w, "not parked", http.StatusBadRequest)
			return
		}
		_, _ = fmt.Fprintf(w, `{"JobModifyIndex": %d}`, 100+registers.Load())
	}))
	t.Cleanup(func() { close(gate) }) // runs before the server's close: no write left waiting
	s, err := New(Config{Token: "t", ParkAfter: 10 * time.Second}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{nodes: poolNodesForTest(), pools: map[string]bool{"default": true}}
	now := time.Unix(1000, 0)
	var es []*entry
	for i := 0; i < 3*admitParallel; i++ {
		id := fmt.Sprintf("j%d", i)
		job := testJob(id, map[string]any{"command": "x", "gpus": 1})
		g, _ := parseGang(job)
		es = append(es, &entry{stub: &jobStub{ID: id, NodePool: s.cfg.QueuePool, JobModifyIndex: 7}, phase: phaseQueued,
			rec: &record{QueuedSince: 900}, job: &cachedJob{index: 7, job: job, gang: g}})
	}
	returned := make(chan struct{})
	go func() {
		s.park(w, es, now) // returns with every write held at the gate
		s.park(w, es, now) // the same jobs again: already in flight
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the round waited for its park writes")
	}
	if len(s.parks.inflight) != len(es) || s.parks.room() == (len(es) >= parkBatch) {
		t.Fatalf("%d parks in flight, want %d", len(s.parks.inflight), len(es))
	}
	waitFor(t, func() bool { return p.now.Load() == admitParallel })
	for range len(es) {
		gate <- struct{}{}
	}
	waitFor(t, func() bool { return len(s.parks.done) == len(es) })
	if p.most.Load() != admitParallel || registers.Load() != int64(len(es)) {
		t.Fatalf("%d registers, at most %d at once; want %d, %d", registers.Load(), p.most.Load(), len(es), admitParallel)
	}
	s.park(w, nil, now) // the next round takes them in
	if len(s.parks.inflight) != 0 || counterValue(s.metrics.parks) != float64(len(es)-1) || counterValue(s.metrics.errors) != 1 {
		t.Fatalf("after the writes: %d in flight, %v parked, %v errors", len(s.parks.inflight),
			counterValue(s.metrics.parks), counterValue(s.metrics.errors))
	}
	if _, ok := s.parkable(w, es[0], unix(now)); ok || s.parkTried["j0"] != 7 {
		t.Fatalf("the failed park would be tried again at the same version (parkTried %v)", s.parkTried)
	}
	// the mirror has not seen the parked versions yet: their stubs are
	// stale, and parking them again would only be refused as a conflict
	if _, ok := s.parkable(w, es[1], unix(now)); ok {
		t.Fatal("a parked job would be parked again from its stale stub")
	}
	s.park(w, es, now)
	if len(s.parks.inflight) != 0 {
		t.Fatalf("%d parks started again from stale stubs", len(s.parks.inflight))
	}
	es[1].stub.JobModifyIndex = 8 // the user submitted it again
	if _, ok := s.parkable(w, es[1], unix(now)); !ok {
		t.Fatal("a job submitted again since its park is not parked again")
	}
}

// waitFor waits (bounded) until cond holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
	}
}
