// Package estimate is Liquid's resource estimation: it learns from
// finished jobs what a job really uses (GPU fraction and GPU memory)
// relative to what it asked for, and right-sizes new requests, never below
// the user's declared floor (HardMinFraction / HardMinMemMiB).
package estimate

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Usage is one finished job's request and its measured peak use.
type Usage struct {
	Model, User  string
	ReqFraction  float64 // per worker, 1 = whole GPU
	ReqMemMiB    int64   // per worker
	UsedFraction float64 // peak compute share actually used
	UsedMemMiB   int64   // peak GPU memory actually used
}

// Config tunes the estimator.
type Config struct {
	// MinSamples a group needs before it is trusted; default 3.
	MinSamples int
	// Headroom multiplies predictions so a slightly bigger run still
	// fits; default 1.1.
	Headroom float64
}

// Estimator regresses used/requested ratios by group. A prediction uses
// the most specific group with enough samples: (model, user, requested
// size), then (model, requested size), then model, else no change. Within
// a group the fitted model is used = ratio × requested, with ratio the
// least-squares slope through the origin, Σ(u·r)/Σ(r²).
type Estimator struct {
	cfg    Config
	groups map[groupKey]*fit
	errs   errStats
}

type groupKey struct {
	model, user string
	size        float64 // requested fraction, 0 = any
}

// fit accumulates the through-origin regressions for compute and memory.
type fit struct {
	n      int
	fr, fu float64 // Σr², Σu·r for the fraction
	mr, mu float64 // Σr², Σu·r for memory
}

// New builds an estimator.
func New(cfg Config) *Estimator {
	if cfg.MinSamples <= 0 {
		cfg.MinSamples = 3
	}
	if cfg.Headroom <= 0 {
		cfg.Headroom = 1.1
	}
	return &Estimator{cfg: cfg, groups: map[groupKey]*fit{}}
}

func keysOf(model, user string, size float64) []groupKey {
	size = math.Round(size*100) / 100
	return []groupKey{{model, user, size}, {model, "", size}, {model, "", 0}}
}

// Observe learns one finished job. Before learning, it predicts the job
// and records the error, so Errors measures honest out-of-sample accuracy.
func (e *Estimator) Observe(u Usage) {
	if !(u.ReqFraction > 0) || u.UsedFraction < 0 || u.ReqMemMiB < 0 || u.UsedMemMiB < 0 {
		return
	}
	if f, m, ok := e.predict(u.Model, u.User, u.ReqFraction, u.ReqMemMiB); ok {
		e.errs.add(f/e.cfg.Headroom, u.UsedFraction, float64(m)/e.cfg.Headroom, float64(u.UsedMemMiB))
	}
	for _, k := range keysOf(u.Model, u.User, u.ReqFraction) {
		g := e.groups[k]
		if g == nil {
			g = &fit{}
			e.groups[k] = g
		}
		g.n++
		g.fr += u.ReqFraction * u.ReqFraction
		g.fu += u.UsedFraction * u.ReqFraction
		r, m := float64(u.ReqMemMiB), float64(u.UsedMemMiB)
		g.mr += r * r
		g.mu += m * r
	}
}

// predict returns headroom-scaled predictions from the best trusted group.
func (e *Estimator) predict(model, user string, frac float64, mem int64) (float64, int64, bool) {
	for _, k := range keysOf(model, user, frac) {
		g := e.groups[k]
		if g == nil || g.n < e.cfg.MinSamples || g.fr == 0 {
			continue
		}
		f := e.cfg.Headroom * frac * g.fu / g.fr
		m := mem
		if g.mr > 0 {
			m = int64(math.Ceil(e.cfg.Headroom * float64(mem) * g.mu / g.mr))
		}
		return f, m, true
	}
	return frac, mem, false
}

// RightSize returns the fraction and memory per worker the job should get:
// the prediction, capped at what was asked and floored at the job's hard
// minimums. ok is false when no group had enough history (the request is
// returned unchanged).
func (e *Estimator) RightSize(j *policy.Job) (frac float64, mem int64, ok bool) {
	req := j.Fraction
	if req <= 0 {
		req = 1
	}
	f, m, ok := e.predict(j.Model, j.User, req, j.MemMiB)
	f = math.Min(req, math.Max(f, j.HardMinFraction))
	if j.MemMiB > 0 {
		m = min(j.MemMiB, max(m, j.HardMinMemMiB))
	} else {
		m = max(m, j.HardMinMemMiB)
	}
	return f, m, ok
}
