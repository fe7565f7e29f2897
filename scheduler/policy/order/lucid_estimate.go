package order

import (
	"fmt"
	"math"
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// LucidEstimateConfig tunes Lucid's workload estimate model.
type LucidEstimateConfig struct {
	// Prior is the duration predicted before any job has finished, in
	// seconds; default 3600.
	Prior policy.Seconds
	// Window is how many of the most recently finished jobs the model is
	// fitted on (Lucid's update engine retrains on recent history, so the
	// model follows drift); default 10000.
	Window int
	// Shrink is the shrinkage λ of every term: a level seen n times gets
	// its median partial residual × n/(n+λ), so rare users or shapes stay
	// near the coarser terms; default 5.
	Shrink float64
	// Passes is the number of backfitting sweeps per refit; default 4.
	Passes int
	// Recent is how many of a user's most recently finished jobs form the
	// "recent" term (their shrunk median residual): it follows a user's
	// current burst of similar jobs between refits; default 30, negative
	// disables it.
	Recent int
	// HourOfDay adds an hour-of-submission term. Off by default: on the
	// Philly trace it raised the prequential error on every large virtual
	// cluster (it learns the hours of past bursts, which do not recur).
	HourOfDay bool
}

func (c LucidEstimateConfig) withDefaults() (LucidEstimateConfig, error) {
	if c.Prior < 0 || c.Window < 0 || c.Shrink < 0 || c.Passes < 0 ||
		math.IsNaN(c.Prior) || math.IsNaN(c.Shrink) || math.IsInf(c.Prior, 0) || math.IsInf(c.Shrink, 0) {
		return c, fmt.Errorf("lucid estimate: prior, window, shrink and passes must be finite and ≥ 0")
	}
	if c.Prior == 0 {
		c.Prior = 3600
	}
	if c.Window == 0 {
		c.Window = 10000
	}
	if c.Shrink == 0 {
		c.Shrink = 5
	}
	if c.Passes == 0 {
		c.Passes = 4
	}
	if c.Recent == 0 {
		c.Recent = 30
	}
	return c, nil
}

// The additive terms of the model, in backfitting order: main effects
// first, then the pairwise interaction (as GA2M adds pairs to a fitted
// main-effect model).
const (
	termShape     = iota // gang shape: (workers, fraction)
	termUser             // user (Philly: the virtual cluster)
	termModel            // model name ("" when the trace has none)
	termHour             // hour of day of submission (if HourOfDay)
	termUserShape        // user × gang shape
	numTerms
)

var termNames = [numTerms]string{"gpus", "user", "model", "hour", "user×gpus"}

type shapeKey struct {
	workers  int
	fraction float64
}

type userShapeKey struct {
	user  int32
	shape int32
}

// lucidObs is one finished job: its levels per term and log duration.
type lucidObs struct {
	lv [numTerms]int32
	y  float64
}

// LucidEstimator is Lucid's interpretable workload estimate model,
// learned online from finished jobs only. It predicts ln(duration) as a
// sum of terms, a GA2M over categorical features:
//
//	ln d̂ = μ + f_gpus(w,frac) + f_user(u) + f_model(m) [+ f_hour(h)] + f_user×gpus(u,w,frac) + recent(u)
//
// Each f is a lookup table fitted by backfitting on the last Window
// finished jobs: a level's score is the median of its partial residuals
// shrunk by n/(n+λ) (medians, because DL run times are heavy-tailed and
// multimodal and a mean of logs is pulled by the tails). A level with
// few samples stays near zero and an unseen level contributes exactly
// zero, so the prediction backs off to the coarser terms (an unseen user
// with a known GPU count gets μ + f_gpus). The model is refitted when the
// data grew by a tenth, at least every 250 finished jobs.
//
// recent(u) is the shrunk median residual of user u's last Recent
// finished jobs against the model of their time. It is a feature of the
// submission context (what the user's jobs ran like just before): the
// caller reads it once when a job arrives (Context) and adds it to
// PredictMain, whose terms follow every refit.
//
// It never reads Job.OracleDuration: the target is the Executed time of
// jobs reported finished. Terms explains a prediction term by term.
type LucidEstimator struct {
	cfg LucidEstimateConfig

	users, models levelTable[string]
	shapes        levelTable[shapeKey]
	userShapes    levelTable[userShapeKey]

	obs  []lucidObs // ring buffer of the last Window observations
	head int        // next slot to overwrite once obs is full
	seen int        // observations ever

	// the fitted model
	mu      float64
	score   [numTerms][]float64
	sigma   float64 // RMS residual of ln duration
	fitted  int     // len(obs) at the last fit
	pending int     // observations since the last fit
	version int     // bumped by every refit

	// recent holds, per user level, the residuals of the user's last
	// Recent finished jobs.
	recent map[int32]*residualRing

	// scratch for refits
	fit, old, res, grp []float64
	cnt, pos           []int
}

// NewLucidEstimator builds an empty model.
func NewLucidEstimator(cfg LucidEstimateConfig) (*LucidEstimator, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &LucidEstimator{
		cfg:   cfg,
		users: newLevelTable[string](), models: newLevelTable[string](),
		shapes: newLevelTable[shapeKey](), userShapes: newLevelTable[userShapeKey](),
		recent: map[int32]*residualRing{},
		mu:     math.Log(cfg.Prior), sigma: 1,
	}, nil
}

// hourOf is the hour of day of a submit time (seconds since the trace or
// Unix epoch; either gives a daily cycle).
func hourOf(submit policy.Seconds) int32 {
	h := math.Mod(submit, 86400)
	if h < 0 {
		h += 86400
	}
	if math.IsNaN(h) {
		return 0
	}
	return int32(h/3600) % 24
}

func shapeOf(j *policy.Job) shapeKey { return shapeOfFeatures(j.Workers, j.Fraction) }

func shapeOfFeatures(workers int, fraction float64) shapeKey {
	if fraction <= 0 {
		fraction = 1
	}
	return shapeKey{workers: workers, fraction: fraction}
}

// levels returns j's level per term; -1 for levels never observed (or
// terms switched off). With add, unseen levels are created.
func (e *LucidEstimator) levels(j *policy.Job, add bool) [numTerms]int32 {
	var lv [numTerms]int32
	lv[termShape] = e.shapes.intern(shapeOf(j), add)
	lv[termUser] = e.users.intern(j.User, add)
	lv[termModel] = e.models.intern(j.Model, add)
	lv[termHour] = -1
	if e.cfg.HourOfDay {
		lv[termHour] = hourOf(j.Submit)
	}
	lv[termUserShape] = -1
	if lv[termUser] >= 0 && lv[termShape] >= 0 {
		lv[termUserShape] = e.userShapes.intern(userShapeKey{lv[termUser], lv[termShape]}, add)
	}
	return lv
}

// Observe learns that a job with j's features ran for d seconds.
func (e *LucidEstimator) Observe(j *policy.Job, d policy.Seconds) {
	if !(d >= 0) || math.IsInf(d, 0) {
		return
	}
	o := lucidObs{lv: e.levels(j, true), y: math.Log(max(d, 1))}
	if e.cfg.Recent > 0 {
		r := e.recent[o.lv[termUser]]
		if r == nil {
			r = &residualRing{}
			e.recent[o.lv[termUser]] = r
		}
		r.add(o.y-e.predictLevels(o.lv), e.cfg.Recent)
	}
	if len(e.obs) < e.cfg.Window {
		e.obs = append(e.obs, o)
	} else {
		e.obs[e.head] = o
		e.head = (e.head + 1) % len(e.obs)
	}
	e.seen++
	e.pending++
	if e.pending >= min(max(1, e.fitted/10), 250) {
		e.refit()
	}
}

// Samples is how many finished jobs the model has seen.
func (e *LucidEstimator) Samples() int { return e.seen }

// Version changes whenever the fitted terms change (not the recent term).
func (e *LucidEstimator) Version() int { return e.version }

// refit backfits every term on the observations in the window.
func (e *LucidEstimator) refit() {
	n := len(e.obs)
	e.fitted, e.pending = n, 0
	e.version++
	if n == 0 {
		return
	}
	e.fit = lucidGrow(e.fit, n)
	for t := range numTerms {
		e.score[t] = lucidGrow(e.score[t], e.levelsOf(t))
		clear(e.score[t])
	}
	e.res = lucidGrow(e.res, n)
	for i, o := range e.obs {
		e.res[i] = o.y
	}
	mu := median(e.res)
	for i := range e.fit {
		e.fit[i] = mu
	}
	for range e.cfg.Passes {
		for t := range numTerms {
			sc := e.score[t]
			e.old = lucidGrow(e.old, len(sc))
			copy(e.old, sc)
			e.medianScores(t)
			for i, o := range e.obs {
				if l := o.lv[t]; l >= 0 {
					e.fit[i] += sc[l] - e.old[l]
				}
			}
		}
		// re-centre the intercept on what the terms leave over
		for i, o := range e.obs {
			e.res[i] = o.y - e.fit[i]
		}
		r := median(e.res)
		mu += r
		for i := range e.fit {
			e.fit[i] += r
		}
	}
	ss := 0.0
	for i, o := range e.obs {
		ss += (o.y - e.fit[i]) * (o.y - e.fit[i])
	}
	e.mu = mu
	// the root mean square residual (not a robust spread: the tails are
	// what decides how long a job that outlived its estimate still runs),
	// blended toward 1 while data is thin
	e.sigma = math.Sqrt((ss + 10) / float64(n+10))
}

// medianScores sets term t's scores to the shrunk median partial
// residual of each level: median × n/(n+λ).
func (e *LucidEstimator) medianScores(t int) {
	sc := e.score[t]
	e.cnt = lucidGrow(e.cnt, len(sc)+1)
	clear(e.cnt)
	for _, o := range e.obs {
		if l := o.lv[t]; l >= 0 {
			e.cnt[l+1]++
		}
	}
	for l := 1; l <= len(sc); l++ {
		e.cnt[l] += e.cnt[l-1]
	}
	e.pos = lucidGrow(e.pos, len(sc))
	copy(e.pos, e.cnt[:len(sc)])
	e.grp = lucidGrow(e.grp, e.cnt[len(sc)])
	for i, o := range e.obs {
		if l := o.lv[t]; l >= 0 {
			e.grp[e.pos[l]] = o.y - (e.fit[i] - sc[l]) // partial residual
			e.pos[l]++
		}
	}
	for l := range sc {
		g := e.grp[e.cnt[l]:e.cnt[l+1]]
		if len(g) == 0 {
			sc[l] = 0
			continue
		}
		sc[l] = median(g) * float64(len(g)) / (float64(len(g)) + e.cfg.Shrink)
	}
}

// median sorts xs in place and returns its median (0 if empty).
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	slices.Sort(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func (e *LucidEstimator) levelsOf(t int) int {
	if t == termHour {
		return 24
	}
	return int(e.counts()[t])
}

// PredictLog is the predicted ln(duration) of j now: the fitted terms
// plus the current recent term.
func (e *LucidEstimator) PredictLog(j *policy.Job) float64 {
	lv := e.levels(j, false)
	return e.predictLevels(lv) + e.recentScore(lv[termUser])
}

// PredictMain is the fitted terms of j's prediction, without the recent term.
func (e *LucidEstimator) PredictMain(j *policy.Job) float64 {
	return e.predictLevels(e.levels(j, false))
}

// Context is the recent term of j's user now: read it when j arrives.
func (e *LucidEstimator) Context(j *policy.Job) float64 {
	return e.recentScore(e.levels(j, false)[termUser])
}

// recentScore is the shrunk median residual of a user's recent jobs.
func (e *LucidEstimator) recentScore(user int32) float64 {
	r := e.recent[user]
	if r == nil || user < 0 || len(r.v) == 0 {
		return 0
	}
	c := slices.Clone(r.v)
	return median(c) * float64(len(c)) / (float64(len(c)) + e.cfg.Shrink)
}

func (e *LucidEstimator) predictLevels(lv [numTerms]int32) float64 {
	y := e.mu
	for t := range numTerms {
		if l := lv[t]; l >= 0 && int(l) < len(e.score[t]) {
			y += e.score[t][l]
		}
	}
	return y
}

// Predict is the predicted duration of j in seconds (the median of a
// log-normal around the additive prediction).
func (e *LucidEstimator) Predict(j *policy.Job) policy.Seconds { return math.Exp(e.PredictLog(j)) }

// Sigma is the root mean square residual of ln(duration) at the last fit.
func (e *LucidEstimator) Sigma() float64 { return e.sigma }

// Term is one additive term of a prediction.
type Term struct {
	Name  string
	Score float64 // contribution to ln(duration)
}

// Terms explains the prediction for j: the intercept, then each term's
// contribution (0 for levels never seen).
func (e *LucidEstimator) Terms(j *policy.Job) []Term {
	lv := e.levels(j, false)
	out := []Term{{Name: "intercept", Score: e.mu}}
	for t := range numTerms {
		s := 0.0
		if l := lv[t]; l >= 0 && int(l) < len(e.score[t]) {
			s = e.score[t][l]
		}
		out = append(out, Term{Name: termNames[t], Score: s})
	}
	return append(out, Term{Name: "recent", Score: e.recentScore(lv[termUser])})
}

// remainingFrom is the predicted remaining run time of a job predicted
// at ln-duration mu (residual spread sigma) that has run e seconds: the
// median of a log-normal duration conditioned on exceeding e, minus e.
// At e = 0 it is exp(mu); it is always positive, so a job that outlives
// its prediction is not treated as about to finish.
func remainingFrom(mu, sigma, e float64) float64 {
	if e <= 0 {
		return math.Exp(mu)
	}
	return remainingLn(mu, sigma, e, math.Log(e))
}

// remainingLn is remainingFrom with ln e given (e > 0; unread otherwise).
func remainingLn(mu, sigma, e, lne float64) float64 {
	if e <= 0 {
		return math.Exp(mu)
	}
	sigma = max(sigma, 0.05)
	z := (lne - mu) / sigma
	var lnm float64
	if z < 6 {
		// S(e) = P(D > e); the conditional median m has S(m) = S(e)/2,
		// ln m = mu + sigma·condMedianZ(z)
		lnm = mu + sigma*condMedianZ(z)
	} else {
		// far in the tail: the excess of ln D over ln e is ≈ exponential
		// with rate z/σ, whose median is σ·ln2/z
		lnm = lne + sigma*math.Ln2/z
	}
	return max(math.Exp(lnm)-e, 1e-3*e)
}

// EstimateError summarises the predictor's error on finished jobs it had
// predicted before they finished (at their first ranking).
type EstimateError struct {
	N int
	// MAELog is the mean |ln predicted − ln actual|.
	MAELog float64
	// MedianRelErr is the median of |predicted − actual| / actual.
	MedianRelErr float64
	// Within2x is the share of predictions within a factor of 2.
	Within2x float64
}

// errorLog accumulates prediction errors.
type errorLog struct {
	absLog []float64
	rel    []float64
}

func (l *errorLog) add(pred, actual float64) {
	actual = max(actual, 1)
	pred = max(pred, 1)
	l.absLog = append(l.absLog, math.Abs(math.Log(pred)-math.Log(actual)))
	l.rel = append(l.rel, math.Abs(pred-actual)/actual)
}

func (l *errorLog) summary() EstimateError {
	n := len(l.absLog)
	if n == 0 {
		return EstimateError{}
	}
	s, in2 := 0.0, 0
	for _, a := range l.absLog {
		s += a
		if a <= math.Ln2 {
			in2++
		}
	}
	rel := slices.Clone(l.rel)
	slices.Sort(rel)
	med := rel[n/2]
	if n%2 == 0 {
		med = (rel[n/2-1] + rel[n/2]) / 2
	}
	return EstimateError{N: n, MAELog: s / float64(n), MedianRelErr: med, Within2x: float64(in2) / float64(n)}
}

// String formats the error for logs.
func (e EstimateError) String() string {
	return fmt.Sprintf("n=%d MAE(ln)=%.3f median rel err=%.2f within 2x=%.1f%%", e.N, e.MAELog, e.MedianRelErr, 100*e.Within2x)
}

// lucidGrow resizes xs to n, reallocating only when its capacity is short.
func lucidGrow[T any](xs []T, n int) []T {
	if cap(xs) < n {
		return make([]T, n)
	}
	return xs[:n]
}

// residualRing keeps the last n residuals.
type residualRing struct {
	v    []float64
	head int
}

func (r *residualRing) add(x float64, n int) {
	if len(r.v) < n {
		r.v = append(r.v, x)
		return
	}
	r.v[r.head] = x
	r.head = (r.head + 1) % n
}
