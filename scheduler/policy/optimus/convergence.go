package optimus

import (
	"errors"
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Curve is Optimus' convergence model loss(k) = 1/(B0·k + B1) + B2 with
// every β ≥ 0, k the training step.
type Curve struct {
	B0, B1, B2 float64
	// RMSE is the fit's root-mean-square error in loss units.
	RMSE float64
}

// Loss evaluates the curve at step k.
func (c Curve) Loss(k float64) float64 { return 1/(c.B0*k+c.B1) + c.B2 }

// StepsTo is the step at which the curve reaches target, or false if it
// never does (target at or below the asymptote B2).
func (c Curve) StepsTo(target float64) (float64, bool) {
	if target <= c.B2 || c.B0 <= 0 {
		return 0, false
	}
	return (1/(target-c.B2) - c.B1) / c.B0, true
}

// FitCurve fits the Optimus model to progress points. For a fixed B2 the
// model is linear in (B0, B1) after y = 1/(loss − B2), so we solve a
// weighted NNLS there (weights (loss − B2)² make residuals approximate loss
// units) and search B2 in [0, min loss) by a grid then golden-section.
func FitCurve(pts []policy.ProgressPoint) (Curve, error) {
	var ks, ls []float64
	for _, p := range pts {
		if p.Loss > 0 && !math.IsInf(p.Loss, 0) && p.Step >= 0 && !math.IsNaN(p.Step) {
			ks, ls = append(ks, p.Step), append(ls, p.Loss)
		}
	}
	if len(ks) < 3 {
		return Curve{}, errors.New("optimus: need at least 3 progress points with positive loss")
	}
	minL := ls[0]
	for _, l := range ls {
		minL = math.Min(minL, l)
	}
	hi := minL * (1 - 1e-9)
	sse := func(b2 float64) (Curve, float64) { return fitGiven(ks, ls, b2) }
	best, bestErr := sse(0)
	const grid = 40
	lo, up := 0.0, hi
	for i := 1; i < grid; i++ {
		b2 := hi * float64(i) / grid
		if c, e := sse(b2); e < bestErr {
			best, bestErr = c, e
			lo, up = hi*float64(i-1)/grid, math.Min(hi, hi*float64(i+1)/grid)
		}
	}
	if c, e := golden(sse, lo, up); e < bestErr {
		best, bestErr = c, e
	}
	best.RMSE = math.Sqrt(bestErr / float64(len(ks)))
	return best, nil
}

// fitGiven fits B0, B1 for a fixed B2 and returns the loss-space SSE.
func fitGiven(ks, ls []float64, b2 float64) (Curve, float64) {
	var n normal2
	for i := range ks {
		gap := ls[i] - b2
		w := gap * gap
		n.add(w*ks[i], w, w/gap)
	}
	x0, x1 := n.solve()
	if x0*ks[0]+x1 <= 0 {
		return Curve{}, math.Inf(1)
	}
	c := Curve{B0: x0, B1: x1, B2: b2}
	e := 0.0
	for i := range ks {
		d := c.Loss(ks[i]) - ls[i]
		e += d * d
	}
	if math.IsNaN(e) {
		e = math.Inf(1)
	}
	return c, e
}

// golden minimises f's error on [lo, hi] by golden-section search.
func golden(f func(float64) (Curve, float64), lo, hi float64) (Curve, float64) {
	const phi = 0.6180339887498949
	a, b := lo, hi
	x1, x2 := b-phi*(b-a), a+phi*(b-a)
	c1, e1 := f(x1)
	c2, e2 := f(x2)
	for i := 0; i < 60 && b-a > 1e-12*(1+math.Abs(b)); i++ {
		if e1 <= e2 {
			b, x2, c2, e2 = x2, x1, c1, e1
			x1 = b - phi*(b-a)
			c1, e1 = f(x1)
		} else {
			a, x1, c1, e1 = x1, x2, c2, e2
			x2 = a + phi*(b-a)
			c2, e2 = f(x2)
		}
	}
	if e1 <= e2 {
		return c1, e1
	}
	return c2, e2
}

// normal2 accumulates the normal equations of a two-column least-squares
// problem, so the inner fit of the B2 search allocates nothing.
type normal2 struct{ aa, ab, bb, ay, by, yy float64 }

func (n *normal2) add(a, b, y float64) {
	n.aa += a * a
	n.ab += a * b
	n.bb += b * b
	n.ay += a * y
	n.by += b * y
	n.yy += y * y
}

// solve is the two-variable NNLS: the unconstrained optimum if it is
// non-negative, else the better of the two one-variable optima (which is
// what Lawson–Hanson converges to for n = 2).
func (n *normal2) solve() (float64, float64) {
	det := n.aa*n.bb - n.ab*n.ab
	if det > 1e-300 {
		x0 := (n.ay*n.bb - n.by*n.ab) / det
		x1 := (n.by*n.aa - n.ay*n.ab) / det
		if x0 >= 0 && x1 >= 0 {
			return x0, x1
		}
	}
	x0, x1 := 0.0, 0.0
	if n.aa > 0 {
		x0 = math.Max(0, n.ay/n.aa)
	}
	if n.bb > 0 {
		x1 = math.Max(0, n.by/n.bb)
	}
	// residual² = yy − 2·x·(a·y) + x²·(a·a); keep the smaller one
	r0 := n.yy - 2*x0*n.ay + x0*x0*n.aa
	r1 := n.yy - 2*x1*n.by + x1*x1*n.bb
	if r0 <= r1 {
		return x0, 0
	}
	return 0, x1
}
