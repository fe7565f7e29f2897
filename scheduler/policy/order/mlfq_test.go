package order

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// A job demoted into Q1 joins its end, behind Q1's waiter, which then
// preempts it; LAS keeps the running job first and preempts nothing.
func TestMLFQDemotedJobJoinsBehindWaiters(t *testing.T) {
	mk := func(runAttained float64) *policy.Snapshot {
		cl := oneNode(2)
		w := pt.Job("w", 2, 0)
		w.Attained, w.Executed = 4000, 2000 // Q1, waiting
		r := pt.Job("r", 2, 10)
		r.Attained, r.Executed = runAttained, runAttained/2
		pt.Run(&cl, r, pt.Whole("r0n0", 16384, 0, 1))
		return &policy.Snapshot{Now: 100, Cluster: cl, Jobs: []*policy.Job{w, r}}
	}
	m, _ := NewLASMLFQ(QueueConfig{})
	if got := ids(m.Order(mk(3000))); !equal(got, []string{"r", "w"}) {
		t.Fatalf("before demotion: %v, want r (Q0) then w (Q1)", got)
	}
	d := decide(t, m, mk(3250)) // r reaches Q1's limit
	if !equal(d.Preempts, []string{"r"}) || !equal(started(d), []string{"w"}) {
		t.Fatalf("mlfq: preempts %v starts %v, want r preempted for w", d.Preempts, started(d))
	}
	l, _ := NewLAS(QueueConfig{})
	if d := decide(t, l, mk(3250)); len(d.Preempts)+len(d.Starts) != 0 {
		t.Fatalf("las: preempts %v starts %v, want nothing", d.Preempts, started(d))
	}
}

// A job preempted out of a queue stays ahead of the jobs already waiting
// there; LAS puts it behind them (FIFO by queue-join time).
func TestMLFQPreemptedJobKeepsItsPlace(t *testing.T) {
	a, b := pt.Job("a", 2, 0), pt.Job("b", 2, 5)
	a.Attained, a.Executed = 5000, 2500 // Q1
	b.Attained, b.Executed, b.QueuedSince = 4000, 2000, 50
	cl := oneNode(2)
	pt.Run(&cl, a, pt.Whole("r0n0", 16384, 0, 1))
	m, _ := NewLASMLFQ(QueueConfig{})
	if got := ids(m.Order(&policy.Snapshot{Now: 100, Cluster: cl, Jobs: []*policy.Job{a, b}})); !equal(got, []string{"a", "b"}) {
		t.Fatalf("Q1 list %v, want a, b", got)
	}
	// a new Q0 job preempted a: now a and b both wait in Q1
	a.State, a.Placement, a.QueuedSince = policy.Queued, policy.Placement{}, 200
	c := pt.Job("c", 2, 200)
	cl = oneNode(2)
	pt.Run(&cl, c, pt.Whole("r0n0", 16384, 0, 1))
	s := &policy.Snapshot{Now: 300, Cluster: cl, Jobs: []*policy.Job{a, b, c}}
	if got := ids(m.Order(s)); !equal(got, []string{"c", "a", "b"}) {
		t.Fatalf("mlfq: %v, want c, then a ahead of b", got)
	}
	l, _ := NewLAS(QueueConfig{})
	if got := ids(l.Order(s)); !equal(got, []string{"c", "b", "a"}) {
		t.Fatalf("las: %v, want c, then b ahead of a", got)
	}
}

// Departed jobs leave the lists; a new job joins the end of Q0.
func TestMLFQForgetsDepartedJobs(t *testing.T) {
	m, _ := NewLASMLFQ(QueueConfig{})
	a, b := pt.Job("a", 1, 0), pt.Job("b", 1, 1)
	m.Order(&policy.Snapshot{Cluster: oneNode(1), Jobs: []*policy.Job{a, b}})
	c := pt.Job("c", 1, 2)
	if got := ids(m.Order(&policy.Snapshot{Cluster: oneNode(1), Jobs: []*policy.Job{b, c}})); !equal(got, []string{"b", "c"}) {
		t.Fatalf("%v, want b, c", got)
	}
	if m.listed() != 2 {
		t.Fatalf("%d jobs listed, want 2", m.listed())
	}
}
