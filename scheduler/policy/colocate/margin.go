package colocate

import (
	"math"
	"sort"
)

// Margin makes a fit conservative: it accepts a pair only where its own
// leave-one-model-out record, on its training models alone, says such
// predictions rarely hide a slowdown over the bound.
type Margin struct {
	// Bound is the slowdown co-location must not exceed (DefaultBound if 0).
	Bound float64
	// Target is the largest share of accepted jobs that may measure over
	// the bound in that inner record (e.g. 0.1); 0 disables the margin.
	Target float64
}

// threshold is the largest predicted slowdown τ ≤ bound such that, among
// the inner held-out predictions at or under τ, at most Target measured
// over the bound; 0 when no τ qualifies (nothing is safe to accept).
func (m Margin) threshold(pm [][2]float64) float64 {
	sort.Slice(pm, func(i, j int) bool { return pm[i][0] < pm[j][0] })
	tau, over := 0.0, 0
	for i, x := range pm {
		if x[1] > m.Bound+1e-9 {
			over++
		}
		if x[0] > m.Bound+1e-9 {
			break
		}
		last := i == len(pm)-1 || pm[i+1][0] != x[0] // τ between distinct predictions
		if last && float64(over) <= m.Target*float64(i+1) {
			tau = x[0]
		}
	}
	return tau
}

// scale is the factor a fit's predictions are multiplied by so that
// predicted ≤ τ reads as ≤ bound: bound ÷ τ, +Inf when τ is 0. The inner
// record refits the training samples without each of their models in
// turn, at the fit's own ridge strength.
func (m Margin) scale(train []Sample, lambda float64, opt FitOptions) float64 {
	if m.Bound <= 0 {
		m.Bound = DefaultBound
	}
	opt.Margin = Margin{}
	var pm [][2]float64
	for _, model := range modelsOf(train) {
		tr, te := split(train, model)
		p, err := FitWith(tr, lambda, opt)
		if err != nil {
			continue
		}
		for _, s := range te {
			pm = append(pm, [2]float64{p.Slowdown(s.Job, s.Partner), math.Max(s.Slowdown, 1)})
		}
	}
	tau := m.threshold(pm)
	if tau <= 0 {
		return math.Inf(1)
	}
	return m.Bound / tau
}
