package place

import (
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// PairPredictor predicts how much two jobs slow each other down on one
// GPU (Horus' pairwise interference), e.g. colocate's graph-feature
// regression or Gavel's measurements. Implementations must be
// deterministic and safe for concurrent use.
type PairPredictor interface {
	// Slowdown is a's predicted slowdown (≥ 1: alone ÷ shared speed)
	// beside b; ok is false when the pair cannot or must not share.
	Slowdown(a, b *policy.Job) (s float64, ok bool)
	// Class groups jobs the predictor cannot tell apart (same model and
	// batch size): the framework memoises failed placements per class.
	Class(j *policy.Job) uint32
}

// DefaultSlowdownBound is the default bound on predicted pairwise
// slowdown: colocate.DefaultBound (1.5), chosen there from Gavel's
// measurements.
const DefaultSlowdownBound = 1.5

// pairsOK reports whether j may join GPU gi of node ni: every job already
// there, and j itself if the gang put a worker there, keeps both
// predicted slowdowns within the bound. A GPU whose occupants are unknown
// (allocations of no running job) has nobody to pair with.
func (i *Interference) pairsOK(j *policy.Job, c *policy.Capacity, ni, gi int, own bool) bool {
	for _, r := range c.Residents(ni, gi) {
		if !i.pairOK(j, r) {
			return false
		}
	}
	return !own || i.pairOK(j, j)
}

func (i *Interference) pairOK(a, b *policy.Job) bool {
	sa, ok := i.cfg.Pairs.Slowdown(a, b)
	if !ok || sa > i.cfg.SlowdownBound+1e-9 {
		return false
	}
	sb, ok := i.cfg.Pairs.Slowdown(b, a)
	return ok && sb <= i.cfg.SlowdownBound+1e-9
}

// TracksResidents asks the framework for each GPU's jobs when a pair
// predictor is configured.
func (i *Interference) TracksResidents() bool { return i.cfg.Pairs != nil }

// boundText is the Waiting text of a gang no GPU may take under the bound.
func (i *Interference) boundText(d policy.Demand) string {
	return "needs " + d.String() + ": no GPU keeps every co-located job's predicted slowdown ≤ " +
		strconv.FormatFloat(i.cfg.SlowdownBound, 'f', 2, 64)
}
