package colocate

import (
	"math"
	"sort"
	"strconv"
)

var inf = math.Inf(1)

// Slowdowner predicts the slowdown of a job beside a partner.
type Slowdowner interface {
	Slowdown(a, b Job) float64
}

// HeldOut predicts each pair with a regression that never saw either
// job's model: one fit per pair of models, each on the samples of the
// other models only (its ridge strength chosen among those too). It is how
// a benchmark on the measured job types stays honest: no prediction is
// tuned on the pairs it predicts.
type HeldOut struct {
	fits  map[[2]string]*Predictor
	group func(Job) string
}

// NewHeldOut fits one predictor per pair of models in samples.
func NewHeldOut(samples []Sample) (*HeldOut, error) { return NewHeldOutWith(samples, FitOptions{}) }

// NewHeldOutWith is NewHeldOut with the options' features.
func NewHeldOutWith(samples []Sample, opt FitOptions) (*HeldOut, error) {
	return newHeldOut(samples, opt, func(j Job) string { return j.Model })
}

// NewHeldOutTypes holds out job types, not models: each pair is predicted
// by a fit that never saw either job's type (model at batch size), though
// it saw the same models at other batch sizes. It is the case of a known
// model run at a new batch size, easier than a new model.
func NewHeldOutTypes(samples []Sample, opt FitOptions) (*HeldOut, error) {
	return newHeldOut(samples, opt, func(j Job) string { return j.Model + "\x00" + strconv.Itoa(j.Batch) })
}

func newHeldOut(samples []Sample, opt FitOptions, group func(Job) string) (*HeldOut, error) {
	return newHeldOutDropping(samples, opt, group, func(Sample) bool { return true })
}

// newHeldOutDropping fits one predictor per pair of groups, each without
// the samples that involve either group and that unseen says a fit for
// that pair must not see (all of them for the strict held-out case).
func newHeldOutDropping(samples []Sample, opt FitOptions, group func(Job) string, unseen func(Sample) bool) (*HeldOut, error) {
	seen := map[string]bool{}
	var groups []string
	for _, s := range samples {
		for _, g := range []string{group(s.Job), group(s.Partner)} {
			if !seen[g] {
				seen[g] = true
				groups = append(groups, g)
			}
		}
	}
	sort.Strings(groups)
	h := &HeldOut{fits: map[[2]string]*Predictor{}, group: group}
	for i, a := range groups {
		for _, b := range groups[i:] {
			var train []Sample
			for _, s := range samples {
				if ga, gb := group(s.Job), group(s.Partner); !unseen(s) || ga != a && ga != b && gb != a && gb != b {
					train = append(train, s)
				}
			}
			p, err := FitCVWith(train, opt)
			if err != nil {
				return nil, err
			}
			h.fits[pairKey(a, b)] = p
		}
	}
	return h, nil
}

// Slowdown predicts a beside b with the fit that saw neither model; a
// pair of models it was not built for gets no co-location (+Inf).
func (h *HeldOut) Slowdown(a, b Job) float64 {
	p := h.fits[pairKey(h.group(a), h.group(b))]
	if p == nil {
		return inf
	}
	return p.Slowdown(a, b)
}

func involves(s Sample, model string) bool { return s.Job.Model == model || s.Partner.Model == model }

func pairKey(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// LeaveOneOut is leave-one-model-out as a cluster meets it: a job of a new
// model arriving where the other models have run before. a's slowdown
// beside b comes from a fit without a's model (so without the pair), which
// did see b's model beside others. HeldOut is stricter: both models new.
type LeaveOneOut struct {
	fits map[string]*Predictor
}

// NewLeaveOneOut fits one predictor per model, each on the samples of the
// other models only (ridge strength chosen among those too).
func NewLeaveOneOut(samples []Sample, opt FitOptions) (*LeaveOneOut, error) {
	l := &LeaveOneOut{fits: map[string]*Predictor{}}
	for _, m := range modelsOf(samples) {
		train, _ := split(samples, m)
		p, err := FitCVWith(train, opt)
		if err != nil {
			return nil, err
		}
		l.fits[m] = p
	}
	return l, nil
}

// Slowdown predicts a beside b with the fit that never saw a's model; a
// model it was not built for gets no co-location (+Inf).
func (l *LeaveOneOut) Slowdown(a, b Job) float64 {
	p := l.fits[a.Model]
	if p == nil {
		return inf
	}
	return p.Slowdown(a, b)
}
