package order

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// On 1 GPU with 3 jobs, every isolated run has a 1/3 share (slowdown 3):
//
//	x: submit 0,   executed 0   → ρ = (1000+300) / (300·3)      = 1.444
//	y: submit 500, executed 0   → ρ = (500+300)  / (300·3)      = 0.889
//	z: submit 0,   executed 600 → ρ = (1000+600) / ((600+600)·3) = 0.444
func TestFairPicksWorstRho(t *testing.T) {
	f, err := NewFair(FairConfig{})
	if err != nil {
		t.Fatal(err)
	}
	x, y, z := pt.Job("x", 1, 0), pt.Job("y", 1, 500), pt.Job("z", 1, 0)
	z.Executed = 600
	s := &policy.Snapshot{Now: 1000, Cluster: oneNode(1), Jobs: []*policy.Job{z, y, x}}
	for _, c := range []struct {
		j    *policy.Job
		want float64
	}{{x, 1300.0 / 900}, {y, 800.0 / 900}, {z, 1600.0 / 3600}} {
		if got := f.Rho(c.j, 1000, 3, 1); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ρ(%s) = %g, want %g", c.j.ID, got, c.want)
		}
	}
	if got := ids(f.Order(s)); !equal(got, []string{"x", "y", "z"}) {
		t.Fatalf("order %v", got)
	}
	if d := decide(t, f, s); !equal(started(d), []string{"x"}) {
		t.Fatalf("starts %v", started(d))
	}
}

func TestFairLeaseProtectsRunningJob(t *testing.T) {
	f, _ := NewFair(FairConfig{Lease: 600})
	cl := oneNode(1)
	r := pt.Job("r", 1, 0)
	r.Executed, r.LastStart = 100, 900
	pt.Run(&cl, r, pt.Whole("r0n0", 16384, 0))
	q := pt.Job("q", 1, 0) // ρ(q) = 1300/600 > ρ(r) = 1300/800
	s := &policy.Snapshot{Now: 1000, Cluster: cl, Jobs: []*policy.Job{r, q}}
	if d := decide(t, f, s); len(d.Preempts) != 0 {
		t.Fatalf("lease not expired, but preempted %v", d.Preempts)
	}
	s.Now = 1500 // lease over: 600 s since r started; ρ(q) = 1800/600 > ρ(r) = 1800/800
	if d := decide(t, f, s); !equal(d.Preempts, []string{"r"}) || !equal(started(d), []string{"q"}) {
		t.Fatalf("after the lease: preempts %v starts %v", d.Preempts, started(d))
	}
}
