package optimus

import (
	"math"
	"testing"
)

func TestNNLSUnconstrainedOptimumIsKept(t *testing.T) {
	a := [][]float64{{1, 0}, {0, 1}, {1, 1}}
	x, err := NNLS(a, []float64{1, 2, 3})
	if err != nil || math.Abs(x[0]-1) > 1e-9 || math.Abs(x[1]-2) > 1e-9 {
		t.Fatalf("x = %v, %v", x, err)
	}
}

func TestNNLSClampsNegative(t *testing.T) {
	// rows x0 + x1 = 1 and x0 = 2: the unconstrained optimum is (2, −1);
	// with x1 = 0, (x0−1)² + (x0−2)² is least at x0 = 1.5
	a := [][]float64{{1, 1}, {1, 0}}
	x, err := NNLS(a, []float64{1, 2})
	if err != nil || math.Abs(x[0]-1.5) > 1e-9 || x[1] != 0 {
		t.Fatalf("x = %v, %v", x, err)
	}
}

func TestNNLSBadInput(t *testing.T) {
	if _, err := NNLS(nil, nil); err == nil {
		t.Error("empty system must fail")
	}
	if _, err := NNLS([][]float64{{1, 2}, {1}}, []float64{1, 2}); err == nil {
		t.Error("ragged matrix must fail")
	}
}

func TestTwoVariableFastPathMatchesNNLS(t *testing.T) {
	for _, c := range []struct{ a, b [][]float64 }{
		{[][]float64{{1, 1}, {1, 0}}, [][]float64{{1, 2}}},
		{[][]float64{{1, 2}, {3, 1}, {0, 1}}, [][]float64{{-1, 2, 3}}},
		{[][]float64{{2, 1}, {1, 3}, {1, 1}}, [][]float64{{1, -5, 0}}},
	} {
		var n normal2
		for i, row := range c.a {
			n.add(row[0], row[1], c.b[0][i])
		}
		f0, f1 := n.solve()
		x, err := NNLS(c.a, c.b[0])
		if err != nil || math.Abs(f0-x[0]) > 1e-9 || math.Abs(f1-x[1]) > 1e-9 {
			t.Errorf("fast (%g, %g) vs Lawson–Hanson %v (%v)", f0, f1, x, err)
		}
	}
}
