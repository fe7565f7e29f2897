package sim

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

func lasPolicy(t *testing.T, cfg order.QueueConfig) policy.Policy {
	t.Helper()
	l, err := order.NewLAS(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return policy.NewFramework(l, place.NewConsolidated())
}

func resultsByID(r *Result) map[string]JobResult {
	m := map[string]JobResult{}
	for _, j := range r.Jobs {
		m[j.ID] = j
	}
	return m
}

// A hand-computed trace on 2 GPUs under 2D-LAS (Q0 < 3250 GPU·s): a (2
// GPUs, 3000 s of work) reaches 3250 GPU·s at exactly t = 1625 and drops
// to Q1, so b (2 GPUs, 500 s, waiting in Q0 since t = 100) preempts it
// then, finishes at 2125, and a resumes and finishes at 2125 + 1375 =
// 3500. Polling would demote a only at the next quantum; the result must
// not depend on the quantum at all.
func TestDemotionFiresAtExactThreshold(t *testing.T) {
	jobs := []Job{job("a", 0, 3000, 2), job("b", 100, 500, 2)}
	for _, q := range []float64{1, 60, 1000, 1e6} {
		r, err := Run(Config{Quantum: q, Check: true}, cluster(t, 1, 2), jobs, lasPolicy(t, order.QueueConfig{}))
		if err != nil {
			t.Fatal(err)
		}
		got := resultsByID(r)
		a, b := got["a"], got["b"]
		if b.Start != 1625 || b.Finish != 2125 || a.Finish != 3500 || a.Preemptions != 1 {
			t.Errorf("quantum %g: b ran %g–%g, a finished %g after %d preemption(s); want b 1625–2125, a 3500 after 1",
				q, b.Start, b.Finish, a.Finish, a.Preemptions)
		}
	}
}

// A starvation knob fires on time. Two queues (Q0 < 1000 GPU·s), 1 GPU,
// PromoteKnob 2: a runs 0–1000 and drops to Q1; b preempts it and runs
// 1000–2000, drops to Q1 and keeps running (running first in a queue).
// a, having waited 2 × its 1000 s of running since t = 1000, returns to
// Q0 at exactly t = 3000 and preempts b; a finishes its 3000 s left at
// 7000 (b is promoted at 7000 too), and b its 3000 s left at 10000. With
// no timer at 3000 nothing else would wake the simulator until a's
// quantum; without the knob b would finish first, at 6000.
func TestStarvationPromotionFiresOnTime(t *testing.T) {
	jobs := []Job{job("a", 0, 5000, 1), job("b", 10, 5000, 1)}
	qc := order.QueueConfig{Queues: 2, Limits: []float64{1000}, PromoteKnob: 2}
	r, err := Run(Config{Quantum: 1e6, Check: true}, cluster(t, 1, 1), jobs, lasPolicy(t, qc))
	if err != nil {
		t.Fatal(err)
	}
	got := resultsByID(r)
	if a, b := got["a"], got["b"]; a.Finish != 7000 || b.Finish != 10000 || b.Preemptions != 1 {
		t.Errorf("a finished %v, b %v after %d preemption(s); want 7000, 10000 after 1", a.Finish, b.Finish, b.Preemptions)
	}
}
