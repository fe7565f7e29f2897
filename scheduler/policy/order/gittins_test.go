package order

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// Two-point service distribution {100, 1000} GPU·s with Δ = 500:
//
//	a=0:   P(S ≤ 500 | S > 0)   = 1/2, E[min(S, 500)]        = (100+500)/2 = 300 → G = 1/600
//	a=50:  P(S ≤ 550 | S > 50)  = 1/2, E[min(S−50, 500)]     = (50+500)/2  = 275 → G = 1/550
//	a=150: P(S ≤ 650 | S > 150) = 0                                                → G = 0
func TestGittinsTwoPointByHand(t *testing.T) {
	g, err := NewGittins(GittinsConfig{Prior: []float64{1000, 100}, Delta: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ a, want float64 }{{0, 1.0 / 600}, {50, 1.0 / 550}, {150, 0}, {5000, 0}} {
		if got := g.Index(c.a); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("G(%g) = %g, want %g", c.a, got, c.want)
		}
	}
	fresh, half, past := pt.Job("fresh", 1, 0), pt.Job("half", 1, 5), pt.Job("past", 1, 1)
	half.Attained, past.Attained = 50, 150
	s := &policy.Snapshot{Now: 10, Cluster: oneNode(1), Jobs: []*policy.Job{fresh, half, past}}
	// unlike LAS, the job with some service but a better chance to finish soon goes first
	if got := ids(g.Order(s)); !equal(got, []string{"half", "fresh", "past"}) {
		t.Fatalf("order %v", got)
	}
	if d := decide(t, g, s); !equal(started(d), []string{"half"}) {
		t.Fatalf("starts %v", started(d))
	}
}

func TestGittinsLearnsOnline(t *testing.T) {
	g, _ := NewGittins(GittinsConfig{Prior: []float64{100, 1000}, Delta: 500})
	f := pt.Job("done", 2, 0)
	f.State, f.Attained = policy.Finished, 200
	s := &policy.Snapshot{Now: 10, Cluster: oneNode(1), Jobs: []*policy.Job{f}}
	fw := policy.NewFramework(g, place.NewConsolidated())
	fw.Decide(s)          // a Finished job in the snapshot is learned
	fw.ObserveFinished(f) // and deduplicated by ID
	if g.Samples() != 3 {
		t.Fatalf("samples %d, want 3", g.Samples())
	}
	// {100, 200, 1000}, a=0: P = 2/3, E = (100+200+500)/3 → G = 2/800
	if got := g.Index(0); math.Abs(got-2.0/800) > 1e-12 {
		t.Errorf("G(0) = %g, want %g", got, 2.0/800)
	}
}
