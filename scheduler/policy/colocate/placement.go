package colocate

import (
	"hash/fnv"
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// PlacementPairs serves a co-location rule to the interference-bounded
// placement (place.PairPredictor). A policy job is a Gavel type by its
// Model (Gavel's model name, e.g. "ResNet-18") and Features.BatchSize on
// one GPU, the features the live scheduler reads from job meta
// (caravan.model, caravan.batch_size) and the simulator's Gavel workload
// sets.
type PlacementPairs struct {
	Rule Rule
	// Gavel and GPU are the measurements: the oracle's slowdowns, and for
	// the other rules whether a pair fits in memory at all (a pair Gavel
	// could not run together). Nil Gavel: every pair fits.
	Gavel *profile.Gavel
	GPU   string
	// Predictor and Graphs serve the Predicted rule: the slowdown from
	// both models' graph features (a model without features never shares).
	Predictor Slowdowner
	Graphs    map[string]profile.ModelGraph
}

var _ place.PairPredictor = (*PlacementPairs)(nil)

// TypeOf is the single-GPU Gavel type a policy job stands for.
func TypeOf(j *policy.Job) profile.GavelType {
	return profile.GavelType{Model: j.Model, Batch: int(math.Round(j.Features.BatchSize)), Scale: 1}
}

// Slowdown implements place.PairPredictor under the rule: Exclusive never
// shares; Naive shares any pair that fits (slowdown reported as 1, so any
// bound admits it); Oracle reports the measured slowdown; Predicted the
// predictor's.
func (p *PlacementPairs) Slowdown(a, b *policy.Job) (float64, bool) {
	ta, tb := TypeOf(a), TypeOf(b)
	measured, fits := p.measured(ta, tb)
	switch {
	case p.Rule == Exclusive || !fits:
		return 0, false
	case p.Rule == Naive:
		return 1, true
	case p.Rule == Oracle:
		return measured, p.Gavel != nil
	case p.Rule == Predicted && p.Predictor != nil:
		ja, erra := GavelJob(ta, p.Graphs)
		jb, errb := GavelJob(tb, p.Graphs)
		if erra != nil || errb != nil {
			return 0, false
		}
		s := p.Predictor.Slowdown(ja, jb)
		return s, !math.IsInf(s, 0) && !math.IsNaN(s)
	}
	return 0, false
}

// measured is a's measured slowdown beside b and whether they fit
// together; with no measurements every pair fits, unmeasured.
func (p *PlacementPairs) measured(a, b profile.GavelType) (float64, bool) {
	if p.Gavel == nil {
		return 0, true
	}
	s, _, ok := p.Gavel.Slowdowns(p.GPU, a, b)
	return s, ok
}

// Class hashes the job's type: jobs of one type share or not alike.
func (*PlacementPairs) Class(j *policy.Job) uint32 {
	h := fnv.New32a()
	h.Write([]byte(TypeOf(j).String()))
	return h.Sum32()
}

// PlacementName names the placement after the rule: "colocate-oracle".
func (p *PlacementPairs) PlacementName() string { return "colocate-" + string(p.Rule) }

// FitPairs is the predicted rule for a live cluster of GPU type gpu: a
// regression fitted (ridge strength by leave-one-model-out) on every
// measured pair of that GPU, with Gavel's measurements deciding which
// pairs fit in memory. A job of a model outside graphs never shares.
func FitPairs(g *profile.Gavel, gpu string, graphs map[string]profile.ModelGraph) (*PlacementPairs, error) {
	return FitPairsWith(g, gpu, graphs, FitOptions{})
}

// FitPairsWith is FitPairs with the options' features (Partners: the
// measured models' learned profiles, which a live cluster has).
func FitPairsWith(g *profile.Gavel, gpu string, graphs map[string]profile.ModelGraph, opt FitOptions) (*PlacementPairs, error) {
	samples, _ := GavelSamples(g, gpu, graphs)
	pred, err := FitCVWith(samples, opt)
	if err != nil {
		return nil, err
	}
	return &PlacementPairs{Rule: Predicted, Gavel: g, GPU: gpu, Predictor: pred, Graphs: graphs}, nil
}
