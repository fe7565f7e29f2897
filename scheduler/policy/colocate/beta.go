package colocate

import (
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// DefaultBeta is the β model as Caravan's interference-aware placement has
// it without measurements: the documented β = 0.05 and utilisations from
// place's utilisation regression at its hand-set prior (forward+backward
// taken as three forward passes).
func DefaultBeta() BetaModel {
	pred := place.NewUtilPredictor(place.DefaultUtilPrior, 5)
	return BetaModel{
		Model: profile.DefaultInterference(),
		Util: func(j Job) float64 {
			return pred.Predict(policy.ModelFeatures{
				ParamsM:       j.Graph.ParamsM,
				GFLOPsPerSamp: 3 * j.Graph.GFLOPs,
				BatchSize:     float64(max(j.Batch, 1)),
			})
		},
	}
}
