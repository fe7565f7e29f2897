package colocate

import (
	"math"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// Errors summarises predictions against measurements.
type Errors struct {
	Pairs       int
	MedianRel   float64 // median |predicted − measured| ÷ measured slowdown
	MeanRel     float64
	Within10    float64 // share of predictions within 10 % of the measurement
	FalseAccept float64 // share of pairs predicted ≤ Bound that measured above it
}

// Evaluation compares predictors on held-out models.
type Evaluation struct {
	GPU   string
	Bound float64
	Horus Errors // graph-feature regression, leave-one-model-out
	// Profiled adds the partner's learned profile (FitOptions.Partners):
	// the held-out model is still unseen, its partners are not.
	Profiled Errors
	Beta     Errors // Caravan's documented model: max(1, uA+uB)·(1+β)
	Median   Errors // the training pairs' median slowdown, for scale
	Models   []ModelError
}

// ModelError is the Horus predictor's error on one held-out model.
type ModelError struct {
	Model string
	Errors
	Lambda float64
}

// EvaluateLOMO holds out each model in turn: the Horus regression (its
// ridge strength chosen without the held-out model) and the training
// median predict that model's pairs; the β model needs no training.
func EvaluateLOMO(samples []Sample, bound float64, beta BetaModel) Evaluation {
	ev := Evaluation{Bound: bound}
	var horus, prof, med, bm [][2]float64 // (predicted, measured)
	for _, m := range modelsOf(samples) {
		train, test := split(samples, m)
		p, err := FitCV(train)
		if err != nil || len(test) == 0 {
			continue
		}
		pp, err := FitCVWith(train, FitOptions{Partners: true})
		if err != nil {
			continue
		}
		c := medianSlowdown(train)
		var mine [][2]float64
		for _, s := range test {
			mine = append(mine, [2]float64{p.Slowdown(s.Job, s.Partner), s.Slowdown})
			prof = append(prof, [2]float64{pp.Slowdown(s.Job, s.Partner), s.Slowdown})
			med = append(med, [2]float64{c, s.Slowdown})
			bm = append(bm, [2]float64{beta.Slowdown(s.Job, s.Partner), s.Slowdown})
		}
		horus = append(horus, mine...)
		ev.Models = append(ev.Models, ModelError{Model: m, Errors: summarise(mine, bound), Lambda: p.Lambda})
	}
	ev.Horus, ev.Median, ev.Beta = summarise(horus, bound), summarise(med, bound), summarise(bm, bound)
	ev.Profiled = summarise(prof, bound)
	return ev
}

func summarise(pm [][2]float64, bound float64) Errors {
	e := Errors{Pairs: len(pm)}
	if len(pm) == 0 {
		return e
	}
	rel := make([]float64, len(pm))
	accepted, wrong := 0, 0
	for i, x := range pm {
		rel[i] = math.Abs(x[0]-x[1]) / x[1]
		e.MeanRel += rel[i] / float64(len(pm))
		if rel[i] <= 0.10 {
			e.Within10++
		}
		if x[0] <= bound {
			accepted++
			if x[1] > bound {
				wrong++
			}
		}
	}
	e.Within10 /= float64(len(pm))
	if accepted > 0 {
		e.FalseAccept = float64(wrong) / float64(accepted)
	}
	sort.Float64s(rel)
	e.MedianRel = rel[len(rel)/2]
	return e
}

func medianSlowdown(s []Sample) float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = x.Slowdown
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// BetaModel is Caravan's documented interference model
// (profile.Interference) fed with a utilisation estimate per job:
// slowdown = max(1, uA+uB)·(1+β). Util maps a job to its utilisation.
type BetaModel struct {
	Model profile.Interference
	Util  func(Job) float64
}

// Slowdown is the β model's slowdown of a beside b.
func (m BetaModel) Slowdown(a, b Job) float64 {
	return m.Model.Factor([]float64{m.Util(a), m.Util(b)})
}
