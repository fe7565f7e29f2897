package order

import (
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func TestQueueLimitsMapping(t *testing.T) {
	l, err := NewLAS(QueueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a    float64
		want int
	}{{0, 0}, {3249, 0}, {3250, 1}, {7199, 1}, {7200, 2}, {18000, 2}, {1e9, 2}} {
		if got := l.q.queueOf(c.a); got != c.want {
			t.Errorf("attained %g: queue %d, want %d", c.a, got, c.want)
		}
	}
	four, _ := NewLAS(QueueConfig{Queues: 4})
	if four.q.queueOf(17999) != 2 || four.q.queueOf(18000) != 3 {
		t.Errorf("4 queues should use 18000 as Q2's limit")
	}
	if _, err := NewLAS(QueueConfig{Queues: 5}); err == nil {
		t.Errorf("5 queues with 3 limits must be rejected")
	}
	if _, err := NewLAS(QueueConfig{Limits: []float64{10, 5}}); err == nil {
		t.Errorf("decreasing limits must be rejected")
	}
}

func TestLASDemotesAndPreempts(t *testing.T) {
	cl := oneNode(4)
	old := pt.Job("old", 4, 0)
	old.Attained, old.Executed, old.LastStart = 4000, 1000, 0 // 4 GPUs × 1000 s → Q1
	pt.Run(&cl, old, pt.Whole("r0n0", 16384, 0, 1, 2, 3))
	young := pt.Job("young", 2, 900)
	s := &policy.Snapshot{Now: 1000, Cluster: cl, Jobs: []*policy.Job{old, young}}
	l, _ := NewLAS(QueueConfig{})
	r := l.Order(s)
	if !equal(ids(r), []string{"young", "old"}) || r[1].Queue != 1 {
		t.Fatalf("order %v (old in queue %d), want young before old in Q1", ids(r), r[1].Queue)
	}
	d := decide(t, l, s)
	if !equal(d.Preempts, []string{"old"}) || !equal(started(d), []string{"young"}) {
		t.Fatalf("preempts %v starts %v, want old preempted for young", d.Preempts, started(d))
	}
	if !strings.Contains(d.Waiting.Reason("old"), "preempted") {
		t.Errorf("old waits with %q", d.Waiting.Reason("old"))
	}
}

func TestLASNoPreemptionWithinQueue(t *testing.T) {
	cl := oneNode(2)
	a := pt.Job("a", 2, 0)
	a.Attained = 100
	pt.Run(&cl, a, pt.Whole("r0n0", 16384, 0, 1))
	b := pt.Job("b", 1, 50)
	s := &policy.Snapshot{Now: 60, Cluster: cl, Jobs: []*policy.Job{a, b}}
	l, _ := NewLAS(QueueConfig{})
	d := decide(t, l, s)
	if len(d.Preempts) != 0 || len(d.Starts) != 0 {
		t.Fatalf("same-queue job must wait, got %+v", d)
	}
	if got := d.Waiting.Reason("b"); !strings.HasPrefix(got, "queue 0: needs 1 GPU, 0 free") {
		t.Errorf("waiting reason %q", got)
	}
}

func TestLASPreemptsOnlyIfItHelps(t *testing.T) {
	cl := oneNode(4)
	low := pt.Job("low", 1, 0)
	low.Attained = 10000 // Q2
	pt.Run(&cl, low, pt.Whole("r0n0", 16384, 0))
	mid := pt.Job("mid", 3, 0)
	mid.Attained = 300 // Q0, running
	pt.Run(&cl, mid, pt.Whole("r0n0", 16384, 1, 2, 3))
	big := pt.Job("big", 4, 10) // Q0 but behind running mid: cannot preempt it
	s := &policy.Snapshot{Now: 20, Cluster: cl, Jobs: []*policy.Job{low, mid, big}}
	l, _ := NewLAS(QueueConfig{})
	d := decide(t, l, s)
	if len(d.Preempts) != 0 {
		t.Fatalf("preempting low alone cannot fit big; preempts %v", d.Preempts)
	}
	if !strings.Contains(d.Waiting.Reason("big"), "would not make it fit") {
		t.Errorf("waiting reason %q", d.Waiting.Reason("big"))
	}
}

func TestPromoteKnobPromotesStarvedJob(t *testing.T) {
	starved := pt.Job("starved", 1, 0)
	starved.Attained, starved.Executed, starved.QueuedSince = 8000, 1000, 1000 // Q2
	other := pt.Job("other", 1, 500)
	other.Attained, other.Executed, other.QueuedSince = 4000, 500, 1000 // Q1, never promoted: its wait is short
	mk := func(now float64) *policy.Snapshot {
		return &policy.Snapshot{Now: now, Cluster: oneNode(1), Jobs: []*policy.Job{starved, other}}
	}
	off, _ := NewLAS(QueueConfig{})
	if got := ids(off.Order(mk(3000))); !equal(got, []string{"other", "starved"}) {
		t.Fatalf("without knob: %v", got)
	}
	l, _ := NewLAS(QueueConfig{PromoteKnob: 2})
	// waited 1999 s < 2 × 1000 s: not yet
	if got := ids(l.Order(mk(2999))); !equal(got, []string{"other", "starved"}) {
		t.Fatalf("before the knob: %v", got)
	}
	r := l.Order(mk(3000)) // waited 2000 s = 2 × 1000 s
	if !equal(ids(r), []string{"starved", "other"}) || r[0].Queue != 0 {
		t.Fatalf("after the knob: %v (queue %d)", ids(r), r[0].Queue)
	}
	// promoted service counts from the promotion: 3000 more GPU·s keeps Q0
	starved.State, starved.Attained, starved.Executed = policy.Running, 11000, 4000
	if q := l.Order(mk(6000)); q[0].Job.ID != "starved" || q[0].Queue != 0 {
		t.Errorf("promoted job should stay in Q0 below 3250 fresh GPU·s, got %v q%d", ids(q), q[0].Queue)
	}
}
