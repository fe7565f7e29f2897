package colocate

import (
	"errors"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Sample is one measurement: Job's slowdown (≥ 1: alone ÷ shared
// throughput) while it shared a GPU with Partner.
type Sample struct {
	Job, Partner Job
	Slowdown     float64
}

// Predictor predicts a job's slowdown beside a partner on one GPU type.
type Predictor struct {
	w        []float64
	partners []string // partner models profiled (FitOptions.Partners)
	gpus     []string // GPU types pooled (FitOptions.PoolGPUs)
	Lambda   float64  // the ridge strength it was fitted with
	// lo, hi bound predictions to the log slowdowns seen in training: a
	// linear model far from its data extrapolates wildly.
	lo, hi float64
	// scale multiplies predictions (FitOptions.Margin); 0 means 1.
	scale float64
}

// Slowdown is the predicted slowdown of a beside b, at least 1.
func (p *Predictor) Slowdown(a, b Job) float64 {
	x := features(a, b, p.partners, p.gpus)
	y := 0.0
	for i, v := range x {
		y += p.w[i] * v
	}
	s := math.Max(1, math.Exp(math.Min(p.hi, math.Max(p.lo, y))))
	if p.scale > 0 {
		s *= p.scale
	}
	return s
}

// FitOptions choose the features beyond the graph features.
type FitOptions struct {
	// Partners adds the partner's model as a learned profile (see
	// features): useful when a new job meets models the cluster has run
	// before, as leave-one-model-out has it.
	Partners bool
	// Margin, when its Target is set, scales FitCV's predictions so a
	// pair is accepted under the bound only where the fit's inner
	// leave-one-model-out record (training models only) kept the share of
	// accepted jobs over the bound within Target.
	Margin Margin
	// PoolGPUs fits samples of several GPU types at once (Job.GPU), the
	// type as a feature: an intercept and a slope on each job's compute
	// per step for each type, the rest shared.
	PoolGPUs bool
}

// Fit is a ridge regression of log slowdown on the pair features with
// strength lambda (the intercept is not shrunk).
func Fit(samples []Sample, lambda float64) (*Predictor, error) {
	return FitWith(samples, lambda, FitOptions{})
}

// FitWith is Fit with the options' features.
func FitWith(samples []Sample, lambda float64, opt FitOptions) (*Predictor, error) {
	var partners []string
	if opt.Partners {
		partners = modelsOf(samples)
		sort.Strings(partners)
	}
	var gpus []string
	if opt.PoolGPUs {
		gpus = gpusOf(samples)
	}
	nf := numFeatures + 2*len(partners) + 3*len(gpus)
	if len(samples) < nf {
		return nil, errors.New("colocate: too few samples to fit")
	}
	x := mat.NewDense(len(samples), nf, nil)
	y := mat.NewVecDense(len(samples), nil)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range samples {
		x.SetRow(i, features(s.Job, s.Partner, partners, gpus))
		v := math.Log(math.Max(s.Slowdown, 1))
		y.SetVec(i, v)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	var xtx mat.Dense
	xtx.Mul(x.T(), x)
	for i := 1; i < nf; i++ {
		xtx.Set(i, i, xtx.At(i, i)+lambda*float64(len(samples)))
	}
	var xty mat.VecDense
	xty.MulVec(x.T(), y)
	var w mat.VecDense
	if err := w.SolveVec(&xtx, &xty); err != nil {
		return nil, errors.New("colocate: regression is singular: " + err.Error())
	}
	return &Predictor{w: w.RawVector().Data, partners: partners, gpus: gpus, Lambda: lambda, lo: lo, hi: hi}, nil
}

// Lambdas are the ridge strengths FitCV chooses among.
var Lambdas = []float64{1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.3, 1, 3}

// FitCV chooses the ridge strength by leave-one-model-out over the models
// in samples (the lowest mean absolute log error), then fits on all of
// them. With fewer than three models it uses the middle strength.
func FitCV(samples []Sample) (*Predictor, error) { return FitCVWith(samples, FitOptions{}) }

// FitCVWith is FitCV with the options' features.
func FitCVWith(samples []Sample, opt FitOptions) (*Predictor, error) {
	models := modelsOf(samples)
	best, bestErr := Lambdas[len(Lambdas)/2], math.Inf(1)
	if len(models) >= 3 {
		for _, l := range Lambdas {
			if e := lomoError(samples, models, l, opt); e < bestErr {
				best, bestErr = l, e
			}
		}
	}
	p, err := FitWith(samples, best, opt)
	if err == nil && opt.Margin.Target > 0 {
		p.scale = opt.Margin.scale(samples, best, opt)
	}
	return p, err
}

// lomoError is the mean |log predicted − log measured| over every model's
// held-out pairs, each predicted by a fit without that model.
func lomoError(samples []Sample, models []string, lambda float64, opt FitOptions) float64 {
	sum, n := 0.0, 0
	for _, m := range models {
		train, test := split(samples, m)
		p, err := FitWith(train, lambda, opt)
		if err != nil {
			return math.Inf(1)
		}
		for _, s := range test {
			sum += math.Abs(math.Log(p.Slowdown(s.Job, s.Partner)) - math.Log(math.Max(s.Slowdown, 1)))
			n++
		}
	}
	if n == 0 {
		return math.Inf(1)
	}
	return sum / float64(n)
}

// split separates the pairs that involve model (on either side) from the rest.
func split(samples []Sample, model string) (train, test []Sample) {
	for _, s := range samples {
		if s.Job.Model == model || s.Partner.Model == model {
			test = append(test, s)
		} else {
			train = append(train, s)
		}
	}
	return train, test
}

func modelsOf(samples []Sample) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range samples {
		for _, m := range []string{s.Job.Model, s.Partner.Model} {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// DefaultBound is the largest slowdown co-location may cause either job by
// default: 1.5, chosen from Gavel's measurements with the oracle rule
// (`caravan colocate bench`, V100, jobs submitted at once): makespan −15 %
// at 1.25, −22 % at 1.5, −20 % at 2.0 against exclusive GPUs. At 1.5 the
// gain is near its peak while no job runs more than 1.5× slower, and two
// such jobs still make 1.33 GPUs' worth of progress on one GPU.
const DefaultBound = 1.5

// gpusOf are the GPU types of samples' jobs, sorted.
func gpusOf(samples []Sample) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range samples {
		if !seen[s.Job.GPU] {
			seen[s.Job.GPU] = true
			out = append(out, s.Job.GPU)
		}
	}
	sort.Strings(out)
	return out
}
