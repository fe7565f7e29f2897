package live

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// While MaxUnplaced admitted jobs wait for Nomad to place them, a round
// admits nothing more and says why; the bound counts this round's
// admissions too, a negative bound lifts it, and a round admits at most
// admitsPerRound jobs.
func TestAdmissionsWaitWhileNomadHasTooManyToPlace(t *testing.T) {
	var registers atomic.Int64
	c := clientOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path != "/v1/jobs" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		_, _ = fmt.Fprintf(w, `{"JobModifyIndex": %d}`, 100+registers.Add(1))
	}))
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		max, placing, starts, admitted int
	}{
		{max: 2, placing: 0, starts: 3, admitted: 2},
		{max: 2, placing: 1, starts: 3, admitted: 1},
		{max: 2, placing: 2, starts: 3, admitted: 0},
		{max: -1, placing: 2, starts: 3, admitted: 3},
		{max: -1, placing: 0, starts: admitsPerRound + 3, admitted: admitsPerRound},
	} {
		s, err := New(Config{Token: "t", MaxUnplaced: tc.max}, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		var es []*entry
		for i := 0; i < tc.placing; i++ { // admitted a while ago, no allocation yet
			es = append(es, &entry{stub: &jobStub{ID: fmt.Sprintf("p%d", i), Status: "pending"}, phase: phaseRunning,
				rec: &record{LastStart: unix(now) - 5}})
		}
		queued, dec, nodes := queuedStarts(t, tc.starts)
		es = append(es, queued...)
		s.countUnplaced(es)
		before := registers.Load()
		waiting := s.apply(&world{nodes: nodes}, es, newGPUBook(nodes, es, nil), dec, now)
		admitted := 0
		for _, e := range es[tc.placing:] {
			if e.rec.Admissions == 1 {
				admitted++
			} else if why := waiting[e.stub.ID]; !strings.HasPrefix(why, "waiting for Nomad to place") && !strings.HasPrefix(why, "admitting at most") {
				t.Errorf("max %d, %d placing: %s waits for %q", tc.max, tc.placing, e.stub.ID, why)
			}
		}
		if admitted != tc.admitted || registers.Load()-before != int64(tc.admitted) {
			t.Errorf("max %d, %d placing: admitted %d (%d registers), want %d", tc.max, tc.placing, admitted, registers.Load()-before, tc.admitted)
		}
		if want := tc.placing + tc.admitted; s.awaiting != want {
			t.Errorf("max %d: the round counts %d awaiting placement, want %d", tc.max, s.awaiting, want)
		}
	}
}

// A round stops sending admissions once it has spent admitWriteTime
// writing them (the first admitParallel always go); the rest stay queued,
// say why, and are not counted as awaiting placement.
func TestAdmissionsStopWhenTheRoundsWriteTimeIsSpent(t *testing.T) {
	var registers atomic.Int64
	s := schedulerOn(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(admitWriteTime / 2) // a busy server: each register takes half the budget
		_, _ = fmt.Fprintf(w, `{"JobModifyIndex": %d}`, 100+registers.Add(1))
	})
	now := time.Unix(1000, 0)
	const starts = 4 * admitParallel // 2 budgets' worth at admitParallel at once
	es, dec, nodes := queuedStarts(t, starts)
	s.countUnplaced(es)
	waiting := s.apply(&world{nodes: nodes}, es, newGPUBook(nodes, es, nil), dec, now)
	admitted, deferred := 0, 0
	for _, e := range es {
		switch {
		case e.rec.Admissions == 1:
			admitted++
		case strings.HasPrefix(waiting[e.stub.ID], "admitting for at most"):
			deferred++
		default:
			t.Errorf("%s neither admitted nor deferred: %q", e.stub.ID, waiting[e.stub.ID])
		}
	}
	if admitted < admitParallel || deferred == 0 || admitted+deferred != starts || registers.Load() != int64(admitted) {
		t.Fatalf("admitted %d (%d registers), deferred %d of %d", admitted, registers.Load(), deferred, starts)
	}
	if s.awaiting != admitted || s.admitting != admitted {
		t.Fatalf("the round counts %d awaiting placement and %d admitting, want %d", s.awaiting, s.admitting, admitted)
	}
}

// queuedStarts is n queued one-GPU jobs, a node for each, and a decision
// starting them all.
func queuedStarts(t *testing.T, n int) ([]*entry, policy.Decision, map[string]*nodeInfo) {
	t.Helper()
	var es []*entry
	var dec policy.Decision
	nodes := map[string]*nodeInfo{}
	for i := 0; i < n; i++ {
		id, node := fmt.Sprintf("q%d", i), fmt.Sprintf("n%d", i)
		nodes[node] = &nodeInfo{ID: node, Name: node, GPUs: []nodeGPU{{Index: 0, UUID: "GPU-" + node, MemoryMiB: 1000, FreeFraction: 1, FreeMemMiB: 1000}}}
		job := testJob(id, map[string]any{"command": "x", "gpus": 1})
		g, err := parseGang(job)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, &entry{stub: &jobStub{ID: id, JobModifyIndex: 7, Status: "pending"}, phase: phaseQueued,
			rec: &record{}, job: &cachedJob{index: 7, job: job, gang: g}})
		dec.Starts = append(dec.Starts, policy.Start{JobID: id, Placement: policy.Placement{Slots: []policy.Slot{{Node: node, GPU: 0, Fraction: 1}}}})
	}
	return es, dec, nodes
}

// A round asks its policy for no more starts than it can use
// (decideStarts): the rest of the queue waits for the decision's start
// budget, not behind starts the round would throw away.
func TestDecisionKeepsToTheRoundsStartBudget(t *testing.T) {
	if decideStarts < admitsPerRound {
		t.Fatalf("a decision's %d starts cannot fill a round's %d admissions", decideStarts, admitsPerRound)
	}
	pol, err := registry.New("fifo+consolidated", registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Scheduler{pol: pol}
	n := decideStarts + 50 // all fit: 1 GPU each on 50 nodes of 8
	snap := &policy.Snapshot{Now: 100, Cluster: pt.Cluster(pt.ClusterSpec{Racks: 5, NodesPerRack: 10, GPUsPerNode: 8})}
	for i := range n {
		snap.Jobs = append(snap.Jobs, pt.Job(fmt.Sprintf("j%03d", i), 1, policy.Seconds(i)))
	}
	dec := s.decide(snap, false)
	why := policy.BudgetReason(decideStarts)
	if len(dec.Starts) != decideStarts || len(dec.Waiting) != n-decideStarts || dec.Waiting[0].Reason != why {
		t.Fatalf("%d starts and %d waiting (%v) for %d jobs that fit, want %d starts and the rest waiting for %q",
			len(dec.Starts), len(dec.Waiting), dec.Waiting[:1], n, decideStarts, why)
	}
	if dec.Starts[decideStarts-1].JobID != fmt.Sprintf("j%03d", decideStarts-1) {
		t.Fatalf("the budget kept %s last, not the first %d in FIFO order", dec.Starts[decideStarts-1].JobID, decideStarts)
	}
}

// A round whose decision stopped at its start budget calls the next
// round at once if it admitted anything (here 10 of 128 starts: the
// others' jobs still stop their last allocations), and waits for an
// event if it admitted nothing.
func TestRoundAtItsStartBudgetCallsTheNext(t *testing.T) {
	c := clientOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, `{"JobModifyIndex": 100}`)
	}))
	now := time.Unix(1000, 0)
	for _, tc := range []struct{ starts, blocked, admitted int }{
		{decideStarts, decideStarts - 10, 10}, {decideStarts, decideStarts, 0}, {decideStarts - 1, decideStarts - 11, 10},
	} {
		s, err := New(Config{Token: "t"}, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		es, dec, nodes := queuedStarts(t, tc.starts)
		for _, e := range es[:tc.blocked] {
			e.allocs.draining = 1
		}
		s.countUnplaced(es)
		s.apply(&world{nodes: nodes}, es, newGPUBook(nodes, es, nil), dec, now)
		if s.admitting != tc.admitted {
			t.Fatalf("%+v: admitted %d", tc, s.admitting)
		}
		if woke, want := len(s.wake) == 1, tc.starts >= decideStarts && tc.admitted > 0; woke != want {
			t.Errorf("%d starts, %d admitted: called the next round %v, want %v", tc.starts, tc.admitted, woke, want)
		}
	}
}
