package colocate

import (
	"fmt"
	"math"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// Job is what the predictor knows of a job at submission.
type Job struct {
	Model string // the model's name, for grouping (leave-one-model-out)
	Batch int    // per-GPU batch size; ≤ 0 means 1
	Graph profile.ModelGraph
	// GPU is the GPU type the job runs on; only a fit pooled over GPU
	// types (FitOptions.PoolGPUs) reads it.
	GPU string
}

// perStep are a job's per-step costs on log scales: compute, activation
// traffic, and model size.
func (j Job) perStep() (compute, traffic, params float64) {
	b := float64(max(j.Batch, 1))
	return math.Log1p(j.Graph.GFLOPs * b), math.Log1p(j.Graph.ActMB * b), math.Log1p(j.Graph.ParamsM)
}

// pairFeatures describes job a sharing a GPU with partner b. The products
// let the slowdown grow with both jobs' demands together, as contention
// does.
func pairFeatures(a, b Job) []float64 {
	ca, ta, pa := a.perStep()
	cb, tb, pb := b.perStep()
	return []float64{
		1,
		ca, cb, ta, tb, pa, pb,
		ca * cb, ta * tb,
		a.Graph.ConvFrac, b.Graph.ConvFrac, a.Graph.RNNFrac, b.Graph.RNNFrac,
		a.Graph.ConvFrac * b.Graph.ConvFrac, a.Graph.MatmulFrac * b.Graph.MatmulFrac,
	}
}

// numFeatures is len(pairFeatures(...)).
const numFeatures = 15

// features is pairFeatures followed, when partners is set, by the
// partner's measured profile: one indicator per model the fit saw as a
// partner, alone and times the job's own compute per step. A model met
// before thus brings what its history says of how hard it presses on a
// GPU; an unseen model (the held-out one) contributes graph features only.
func features(a, b Job, partners, gpus []string) []float64 {
	x := pairFeatures(a, b)
	ca, _, _ := a.perStep()
	cb, _, _ := b.perStep()
	for _, g := range gpus {
		v := 0.0
		if a.GPU == g {
			v = 1
		}
		x = append(x, v, v*ca, v*cb)
	}
	for _, m := range partners {
		v := 0.0
		if b.Model == m {
			v = 1
		}
		x = append(x, v, v*ca)
	}
	return x
}

// GavelJob is the predictor's view of a Gavel job type, with its model's
// graph features; an error names a model with no features.
func GavelJob(t profile.GavelType, graphs map[string]profile.ModelGraph) (Job, error) {
	g, ok := graphs[t.Model]
	if !ok {
		return Job{}, fmt.Errorf("colocate: no graph features for model %q", t.Model)
	}
	return Job{Model: t.Model, Batch: t.Batch, Graph: g}, nil
}
