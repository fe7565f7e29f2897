package sim

import (
	"errors"
	"math/rand/v2"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// GavelOptions turn a trace into a workload of Gavel job types (issue
// #18): whole-GPU single-GPU jobs that may share their GPU with one other.
type GavelOptions struct {
	// Types are the job types drawn from, uniformly (e.g. a GPU type's
	// single-GPU types from profile.Gavel.Types).
	Types []profile.GavelType
	// Fraction is the share each job asks for, so a policy may put two on
	// one GPU; default 0.5. A job alone on its GPU still runs at full
	// speed (a single slot's fraction does not slow it).
	Fraction float64
	// MaxWork caps each job's run time alone, seconds (0 = no cap): a few
	// multi-day jobs would otherwise decide every makespan.
	MaxWork float64
	Seed    uint64
}

// AssignGavel keeps the trace's single-GPU whole-GPU jobs (their submit
// times and run times) and gives each a Gavel type drawn with Seed: Model
// and Features.BatchSize name it to policies, PairType to Config.Pairs,
// and Util 1 (a whole GPU's demand) feeds the documented interference
// model for pairs without measurements. dropped counts the other jobs.
func AssignGavel(jobs []Job, opt GavelOptions) (out []Job, dropped int, err error) {
	var types []profile.GavelType
	for _, t := range opt.Types {
		if t.Scale == 1 {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return nil, 0, errors.New("gavel workload: no single-GPU job types")
	}
	frac := opt.Fraction
	if frac == 0 {
		frac = 0.5
	}
	if !(frac > 0 && frac <= 1) {
		return nil, 0, errors.New("gavel workload: fraction must be in (0,1]")
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6a09e667f3bcc909))
	for _, j := range jobs {
		if j.GPUs != 1 || j.Fraction != 1 {
			dropped++
			continue
		}
		t := types[rng.IntN(len(types))]
		j.Fraction, j.Util = frac, 1
		if opt.MaxWork > 0 {
			j.Work = min(j.Work, opt.MaxWork)
		}
		j.Model, j.PairType = t.Model, t.String()
		j.Features.BatchSize = float64(t.Batch)
		j.Speed, j.MinWorkers, j.MaxWorkers = nil, 0, 0
		out = append(out, j)
	}
	if len(out) == 0 {
		return nil, dropped, errors.New("gavel workload: the trace has no single-GPU jobs")
	}
	return out, dropped, nil
}
