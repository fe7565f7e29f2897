package order

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// Prior {100, 1000}, Δ = 500, as the reference computes it at each sample
// less one second: at a = 99, P = 1/2 and E = (100 + 500)/2 = 300, so the
// index is 0.5·10⁶/300 = 1666.6667 (rounded to 4 places); at a = 999 no
// sample ends within Δ, so 0. Service 0..99 gets the first, 100..999 the
// second, and past 1000 it is 0.
func TestGittinsRefIndexByHand(t *testing.T) {
	g, err := NewGittinsRef(GittinsConfig{Prior: []float64{1000, 100}, Delta: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ a, want float64 }{{0, 1666.6667}, {99.9, 1666.6667}, {100, 0}, {999, 0}, {1000, 0}, {5000, 0}} {
		if got := g.Index(c.a); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("index(%g) = %v, want %v", c.a, got, c.want)
		}
	}
	if _, err := NewGittinsRef(GittinsConfig{}); err == nil {
		t.Fatal("no prior: want an error")
	}
}

// Unlike Gittins, the reference ranks a whole queue by index, running or
// not: a waiting Q0 job with a better index preempts a running Q0 job.
func TestGittinsRefPreemptsInsideQueue(t *testing.T) {
	mk := func() *policy.Snapshot {
		cl := oneNode(1)
		run := pt.Job("run", 1, 0)
		run.Attained, run.Executed = 150, 150 // index 0, still Q0
		pt.Run(&cl, run, pt.Whole("r0n0", 16384, 0))
		return &policy.Snapshot{Now: 200, Cluster: cl, Jobs: []*policy.Job{run, pt.Job("wait", 1, 5)}}
	}
	ref, _ := NewGittinsRef(GittinsConfig{Prior: []float64{1000, 100}, Delta: 500})
	if d := decide(t, ref, mk()); !equal(d.Preempts, []string{"run"}) || !equal(started(d), []string{"wait"}) {
		t.Fatalf("ref: preempts %v starts %v, want run preempted for wait", d.Preempts, started(d))
	}
	g, _ := NewGittins(GittinsConfig{Prior: []float64{1000, 100}, Delta: 500})
	if d := decide(t, g, mk()); len(d.Preempts)+len(d.Starts) != 0 {
		t.Fatalf("gittins: preempts %v starts %v, want nothing", d.Preempts, started(d))
	}
}
