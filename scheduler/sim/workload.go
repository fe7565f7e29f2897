package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/profile"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// Job is one job to replay.
type Job struct {
	trace.Job
	// Work is seconds of training at speed 1 (consolidated, requested
	// workers); the trace duration unless a workload says otherwise.
	Work float64
	// Speed is the model whose measurements decide how much slower a
	// spread placement or another worker count runs (nil: placement-blind).
	Speed *profile.Model
	// Util is the job's GPU demand for interference (0..1 of a GPU).
	Util float64
	// PairType names the job's measured type for Config.Pairs ("" = none).
	PairType string
	// Features are what a policy may know of the model (batch size for
	// Gavel types; see AssignGavel).
	Features policy.ModelFeatures
	// MinWorkers/MaxWorkers allow elastic resizing (0 = fixed).
	MinWorkers, MaxWorkers int
	// NoSpeedup caps the placement effect at 1: a recorded run is the best
	// case, whatever the profile says about other shapes.
	NoSpeedup bool
}

// WorkloadOptions decide how trace jobs become simulated jobs.
type WorkloadOptions struct {
	// Profiles supplies speed models; nil makes placement irrelevant.
	Profiles *profile.Set
	// SpreadModel is the profile every plain trace job uses for the
	// spread-placement penalty (default "imagenet", ResNet-50: the
	// typical job of the Philly/Tiresias era). Ignored when AssignModels.
	SpreadModel string
	// AssignModels gives each job a profiled model drawn with Seed, so
	// that models with costly all-reduce make placement matter.
	AssignModels bool
	Seed         uint64
	// Elastic lets jobs run on 1..2× their requested workers (Optimus).
	Elastic bool
}

// Build turns trace jobs into simulated jobs.
func Build(jobs []trace.Job, opt WorkloadOptions) ([]Job, error) {
	var names []string
	var spread *profile.Model
	if opt.Profiles != nil {
		names = opt.Profiles.Names()
		name := opt.SpreadModel
		if name == "" {
			name = "imagenet"
		}
		m, err := opt.Profiles.Get(name)
		if err != nil {
			return nil, err
		}
		spread = m
	} else if opt.AssignModels {
		return nil, fmt.Errorf("assigning models needs profiles")
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	out := make([]Job, len(jobs))
	for i, tj := range jobs {
		if tj.Fraction <= 0 || tj.Fraction > 1 {
			return nil, fmt.Errorf("%s: job %s: GPU fraction %v outside (0,1]", tj.Source, tj.ID, tj.Fraction)
		}
		j := Job{Job: tj, Work: tj.Duration, Speed: spread, Util: tj.Fraction, NoSpeedup: !opt.AssignModels}
		if opt.AssignModels {
			j.Speed = opt.Profiles.Models[names[rng.IntN(len(names))]]
			j.Model = j.Speed.Name
		}
		if opt.Elastic && tj.Fraction == 1 {
			j.MinWorkers, j.MaxWorkers = 1, 2*tj.GPUs
		}
		out[i] = j
	}
	return out, nil
}
