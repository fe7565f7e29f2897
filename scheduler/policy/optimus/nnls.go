// Package optimus implements the Optimus scheduler (Peng et al., EuroSys'18)
// for Caravan: online convergence fitting by non-negative least squares, a
// fitted speed-vs-workers model, and greedy allocation of GPUs by marginal
// gain in estimated completion time, with elastic resizing.
package optimus

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// NNLS solves min ‖Ax − b‖ subject to x ≥ 0 with the Lawson–Hanson
// active-set method. a is row-major, m rows of n columns.
func NNLS(a [][]float64, b []float64) ([]float64, error) {
	m := len(a)
	if m == 0 || m != len(b) {
		return nil, errors.New("nnls: need as many rows as targets, at least one")
	}
	n := len(a[0])
	for _, row := range a {
		if len(row) != n {
			return nil, errors.New("nnls: ragged matrix")
		}
	}
	x := make([]float64, n)
	passive := make([]bool, n)
	const tol = 1e-10
	for iter := 0; iter < 3*n+10; iter++ {
		w := gradient(a, b, x)
		t, best := -1, tol
		for j := 0; j < n; j++ {
			if !passive[j] && w[j] > best {
				t, best = j, w[j]
			}
		}
		if t < 0 {
			return x, nil // KKT conditions hold
		}
		passive[t] = true
		if err := innerLoop(a, b, x, passive); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// innerLoop solves the unconstrained problem on the passive set and walks
// back toward feasibility until every passive variable is positive.
func innerLoop(a [][]float64, b []float64, x []float64, passive []bool) error {
	for k := 0; k <= len(x); k++ {
		z, err := solveOn(a, b, passive)
		if err != nil {
			return err
		}
		alpha := 1.0
		for j := range x {
			if passive[j] && z[j] <= 0 {
				alpha = math.Min(alpha, x[j]/(x[j]-z[j]))
			}
		}
		if alpha >= 1 {
			copy(x, z)
			return nil
		}
		for j := range x {
			x[j] += alpha * (z[j] - x[j])
			if passive[j] && x[j] <= 1e-12 {
				passive[j], x[j] = false, 0
			}
		}
	}
	return nil
}

// gradient is Aᵀ(b − Ax).
func gradient(a [][]float64, b, x []float64) []float64 {
	w := make([]float64, len(x))
	for i, row := range a {
		r := b[i]
		for j, v := range row {
			r -= v * x[j]
		}
		for j, v := range row {
			w[j] += v * r
		}
	}
	return w
}

// solveOn is least squares on the passive columns (others are zero).
func solveOn(a [][]float64, b []float64, passive []bool) ([]float64, error) {
	var cols []int
	for j, p := range passive {
		if p {
			cols = append(cols, j)
		}
	}
	z := make([]float64, len(passive))
	if len(cols) == 0 {
		return z, nil
	}
	am := mat.NewDense(len(a), len(cols), nil)
	for i, row := range a {
		for c, j := range cols {
			am.Set(i, c, row[j])
		}
	}
	var sol mat.VecDense
	if err := sol.SolveVec(am, mat.NewVecDense(len(b), append([]float64(nil), b...))); err != nil {
		return nil, errors.New("nnls: singular subproblem: " + err.Error())
	}
	for c, j := range cols {
		z[j] = sol.AtVec(c)
	}
	return z, nil
}
