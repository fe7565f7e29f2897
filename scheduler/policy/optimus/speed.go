package optimus

import (
	"math"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Speed models seconds per step against the worker count w as
//
//	T(w) = C0/w + C1 + C2·w    (C ≥ 0)
//
// the all-reduce analogue of Optimus' parameter-server throughput model:
// C0 is compute split across workers (a step is a fixed global batch), C1
// fixed per-step overhead, C2 communication growing with the ring.
// With ≥ 3 distinct worker counts all three are fitted by NNLS; with 2,
// C0 and C1; with 1 observation T(w0) we assume the prior that 90% of the
// step parallelises; with none, perfect scaling from 1 s/step at 1 worker.
type Speed struct{ C0, C1, C2 float64 }

// StepTime is seconds per step with w workers.
func (s Speed) StepTime(w int) float64 {
	if w <= 0 {
		return math.Inf(1)
	}
	return s.C0/float64(w) + s.C1 + s.C2*float64(w)
}

// ParallelPrior is the parallel share assumed from a single observation.
const ParallelPrior = 0.9

// FitSpeed fits the model to observed step times keyed by worker count.
func FitSpeed(obs map[int]policy.Seconds) Speed {
	if len(obs) == 1 { // the common case, without allocating
		for w, t := range obs {
			if w > 0 && t > 0 && !math.IsInf(t, 0) {
				return oneSpeed(w, t)
			}
		}
		return Speed{C0: 1}
	}
	var ws []int
	for w, t := range obs {
		if w > 0 && t > 0 && !math.IsInf(t, 0) {
			ws = append(ws, w)
		}
	}
	sort.Ints(ws)
	switch len(ws) {
	case 0:
		return Speed{C0: 1}
	case 1:
		return oneSpeed(ws[0], obs[ws[0]])
	}
	cols := 3
	if len(ws) == 2 {
		cols = 2
	}
	a := make([][]float64, len(ws))
	b := make([]float64, len(ws))
	for i, w := range ws {
		fw := float64(w)
		a[i] = []float64{1 / fw, 1, fw}[:cols]
		b[i] = obs[w]
	}
	x, err := NNLS(a, b)
	if err != nil {
		return FitSpeed(map[int]policy.Seconds{ws[0]: obs[ws[0]]})
	}
	s := Speed{C0: x[0], C1: x[1]}
	if cols == 3 {
		s.C2 = x[2]
	}
	if s.StepTime(1) <= 0 {
		return FitSpeed(map[int]policy.Seconds{ws[0]: obs[ws[0]]})
	}
	return s
}

// oneSpeed is the fit to one observation: t seconds per step at w workers,
// ParallelPrior of it parallel.
func oneSpeed(w int, t policy.Seconds) Speed {
	fw := float64(w)
	return Speed{C0: ParallelPrior * t * fw, C1: (1 - ParallelPrior) * t}
}

// speedCache keeps a job's last FitSpeed with the observations it was
// fitted to: a job that has run at several sizes has its speed solved by
// NNLS, and with elastic jobs that was most of a simulated decision,
// every changed job being re-estimated while its step times rarely move.
type speedCache struct {
	obs   []stepObs
	speed Speed
}

type stepObs struct {
	w int
	t policy.Seconds
}

// of is FitSpeed(obs), refitted only when obs differs from the last
// observations (a key added or gone, a time with other bits).
func (c *speedCache) of(obs map[int]policy.Seconds) Speed {
	if len(c.obs) == len(obs) && c.obs != nil {
		same := true
		for _, o := range c.obs {
			if t, ok := obs[o.w]; !ok || math.Float64bits(t) != math.Float64bits(o.t) {
				same = false
				break
			}
		}
		if same {
			return c.speed
		}
	}
	c.obs = c.obs[:0]
	for w, t := range obs {
		c.obs = append(c.obs, stepObs{w, t})
	}
	c.speed = FitSpeed(obs)
	return c.speed
}
