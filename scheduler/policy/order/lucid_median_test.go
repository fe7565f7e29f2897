package order

import (
	"math"
	"testing"
)

// The table stays within 1e-10 of the closed form across its range
// (a few ulps of a job's ln duration, far below any estimate's error),
// is continuous at its knots, and hands the closed form everything
// outside it.
func TestCondMedianTable(t *testing.T) {
	worst, at := 0.0, 0.0
	for i := 0; i <= 1_400_000; i++ {
		z := medianZLo + (medianZHi-medianZLo)*float64(i)/1_400_000
		if d := math.Abs(condMedianZ(z) - condMedianExact(z)); d > worst {
			worst, at = d, z
		}
	}
	t.Logf("worst |table − closed form| %.3g at z = %.4f", worst, at)
	if worst > 1e-10 {
		t.Errorf("table error %g at z = %g, want ≤ 1e-10", worst, at)
	}
	for _, z := range []float64{medianZLo - 1e-9, -30, math.Inf(-1), medianZHi, 7} {
		if got, want := condMedianZ(z), condMedianExact(z); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("z = %g outside the table: %g, want the closed form's %g", z, got, want)
		}
	}
	if got := condMedianZ(math.NaN()); !math.IsNaN(got) {
		t.Errorf("NaN z: %g", got)
	}
	for k := 1; k < len(medianTable)-1; k++ { // a knot is its own value
		z := medianZLo + float64(k)/medianSteps
		if got := condMedianZ(z); math.Abs(got-medianTable[k].h) > 1e-15 {
			t.Errorf("knot %d: %g, want %g", k, got, medianTable[k].h)
		}
	}
}

// medianSink keeps the benchmark's sums alive.
var medianSink float64

func BenchmarkCondMedian(b *testing.B) {
	zs := make([]float64, 1024)
	for i := range zs {
		zs[i] = medianZLo + (medianZHi-medianZLo)*float64(i*7919%1024)/1024
	}
	b.Run("table", func(b *testing.B) {
		s := 0.0
		for i := 0; i < b.N; i++ {
			s += condMedianZ(zs[i&1023])
		}
		medianSink = s
	})
	b.Run("closed-form", func(b *testing.B) {
		s := 0.0
		for i := 0; i < b.N; i++ {
			s += condMedianExact(zs[i&1023])
		}
		medianSink = s
	})
}
