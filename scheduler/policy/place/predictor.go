package place

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// UtilPredictor is Horus' utilisation model: a linear regression from model
// features to the GPU utilisation a job reaches on a whole GPU,
//
//	util ≈ w0 + w1·ln(1+ParamsM) + w2·ln(1+GFLOPsPerSamp) + w3·ln(1+BatchSize)
//
// learned online by recursive least squares. It starts from a hand-set
// prior (DefaultUtilPrior: more compute per step → busier GPU; e.g.
// ResNet-50 at batch 32 → 0.62, NCF at batch 256 → 0.43, BERT → 0.9) held
// with PriorWeight pseudo-observations, so a few real observations move it
// and many override it. Predictions are clamped to [0.05, 1].
type UtilPredictor struct {
	w [4]float64
	p [4][4]float64 // inverse information matrix of RLS
	n int
}

// DefaultUtilPrior are the prior weights w0..w3.
var DefaultUtilPrior = [4]float64{0.10, 0.0, 0.12, 0.06}

// NewUtilPredictor starts from prior with the given strength (how many
// observations the prior is worth; ≤ 0 means 1).
func NewUtilPredictor(prior [4]float64, priorWeight float64) *UtilPredictor {
	if priorWeight <= 0 {
		priorWeight = 1
	}
	u := &UtilPredictor{w: prior}
	for i := range u.p {
		u.p[i][i] = 1 / priorWeight
	}
	return u
}

func featuresOf(f policy.ModelFeatures) [4]float64 {
	l := func(v float64) float64 { return math.Log1p(math.Max(0, v)) }
	return [4]float64{1, l(f.ParamsM), l(f.GFLOPsPerSamp), l(f.BatchSize)}
}

// Predict is the utilisation expected for a model with features f.
func (u *UtilPredictor) Predict(f policy.ModelFeatures) float64 {
	x := featuresOf(f)
	y := 0.0
	for i := range x {
		y += u.w[i] * x[i]
	}
	return math.Min(1, math.Max(0.05, y))
}

// Observe learns one measured utilisation (0..1] for features f.
func (u *UtilPredictor) Observe(f policy.ModelFeatures, util float64) {
	if !(util > 0 && util <= 1) {
		return
	}
	x := featuresOf(f)
	var px [4]float64 // P·x
	for i := range px {
		for k := range x {
			px[i] += u.p[i][k] * x[k]
		}
	}
	den := 1.0
	for i := range x {
		den += x[i] * px[i]
	}
	errv := util
	for i := range x {
		errv -= u.w[i] * x[i]
	}
	for i := range u.w {
		u.w[i] += px[i] / den * errv
	}
	for i := range u.p {
		for k := range u.p[i] {
			u.p[i][k] -= px[i] * px[k] / den
		}
	}
	u.n++
}

// Observations is how many utilisations were learned.
func (u *UtilPredictor) Observations() int { return u.n }
