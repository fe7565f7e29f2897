package order

import (
	"math/rand/v2"
	"testing"
)

// TestGittinsSpanCovers: wherever a span taken at a covers b, its index
// at b is Gittins(b) bit for bit, also after samples at or below b were
// added; and a span never claims to cover past the next sample.
func TestGittinsSpanCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var prior []float64
	for range 2000 {
		prior = append(prior, rng.ExpFloat64()*5000)
	}
	d, delta := NewServiceDist(prior), 3250.0
	hits := 0
	for range 20000 {
		a := rng.ExpFloat64() * 5000
		sp := d.span(a, delta)
		b := a + rng.ExpFloat64()*20
		if rng.IntN(3) == 0 {
			d.Add(rng.Float64() * b) // a sample at or below b
		}
		if !sp.covers(b, delta) {
			if b < sp.next && b+delta < sp.nextQ {
				t.Fatalf("span at %g refuses %g though no sample lies between", a, b)
			}
			continue
		}
		hits++
		if got, want := sp.index(b, delta), d.Gittins(b, delta); got != want {
			t.Fatalf("span at %g gives %v at %g, Gittins %v", a, got, b, want)
		}
	}
	if hits < 1000 {
		t.Fatalf("only %d covered cases: the test does not exercise spans", hits)
	}
}
