package sim

import "github.com/caravan-dl/caravan/scheduler/profile"

// PairSlowdowns are measured slowdowns of job types sharing one GPU: a's
// and b's, alone ÷ shared throughput; ok is false when the pair was not
// measured (or could not run together).
type PairSlowdowns interface {
	Slowdowns(a, b string) (sa, sb float64, ok bool)
}

// Colocations counts the distinct pairs of jobs that shared a GPU in a
// run, by which interference model set their speed.
type Colocations struct {
	Measured int `json:"measured"` // both jobs had a measured type: the pair's measured slowdowns
	Modelled int `json:"modelled"` // the documented model (profile.Interference)
	// OverBound counts measured co-locations where either job ran more
	// than the pairs' Bound slower (0 when Pairs has no bound).
	OverBound int `json:"over_bound"`
	// SustainedOver counts over-bound co-locations no probe window ended
	// (all of OverBound without a pair explorer; 0 with one, an invariant
	// Config.Check verifies). The rest are exploration's (PairExplorer):
	// Probes began, ProbesOver of them measured over the bound, each
	// ending in an eviction (Evictions) unless a job finished first, and
	// ProbeOverSeconds the time over-bound probes ran together.
	SustainedOver    int     `json:"sustained_over,omitempty"`
	Probes           int     `json:"probes,omitempty"`
	ProbesOver       int     `json:"probes_over,omitempty"`
	Evictions        int     `json:"evictions,omitempty"`
	ProbeOverSeconds float64 `json:"probe_over_seconds,omitempty"`
}

// boundedPairs is PairSlowdowns with a bound co-location should keep.
type boundedPairs interface {
	Bound() float64
}

// pairFactor is job j's slowdown on a GPU it shares with exactly one other
// job, from the measurements when both have measured types.
func (e *engine) pairFactor(j *simJob, jobs []*simJob) (float64, bool) {
	if e.cfg.Pairs == nil || len(jobs) != 2 {
		return 0, false
	}
	other := jobs[0]
	if other == j {
		other = jobs[1]
	}
	if j.spec.PairType == "" || other.spec.PairType == "" {
		return 0, false
	}
	s, _, ok := e.cfg.Pairs.Slowdowns(j.spec.PairType, other.spec.PairType)
	return s, ok
}

// countColocation records a pair of co-located jobs once per run.
func (e *engine) countColocation(a, b *simJob, measured bool) {
	if e.colocSeen == nil {
		e.colocSeen = map[[2]*simJob]bool{}
	}
	if a.pj.ID > b.pj.ID {
		a, b = b, a
	}
	k := [2]*simJob{a, b}
	if e.colocSeen[k] {
		return
	}
	e.colocSeen[k] = true
	if measured {
		e.countOverBound(a, b)
		e.res.Colocations.Measured++
	} else {
		e.res.Colocations.Modelled++
	}
}

// GavelPairs serves Gavel's measured pairs of one GPU type to the
// simulator, keyed by profile.GavelType's String.
type GavelPairs struct {
	// Limit is the slowdown bound a co-location should keep; > 0 makes
	// runs count co-locations above it (Colocations.OverBound).
	Limit float64
	g     *profile.Gavel
	gpu   string
	types map[string]profile.GavelType
}

// NewGavelPairs indexes gpu's job types by name.
func NewGavelPairs(g *profile.Gavel, gpu string) *GavelPairs {
	p := &GavelPairs{g: g, gpu: gpu, types: map[string]profile.GavelType{}}
	for _, t := range g.Types(gpu) {
		p.types[t.String()] = t
	}
	return p
}

// Slowdowns implements PairSlowdowns.
func (p *GavelPairs) Slowdowns(a, b string) (float64, float64, bool) {
	ta, oka := p.types[a]
	tb, okb := p.types[b]
	if !oka || !okb {
		return 0, 0, false
	}
	return p.g.Slowdowns(p.gpu, ta, tb)
}

// Bound is the pairs' slowdown bound (0 = none).
func (p *GavelPairs) Bound() float64 { return p.Limit }

// countOverBound counts a measured pair either of whose slowdowns breaks
// the pairs' bound.
func (e *engine) countOverBound(a, b *simJob) {
	bp, ok := e.cfg.Pairs.(boundedPairs)
	if !ok || bp.Bound() <= 0 {
		return
	}
	sa, sb, ok := e.cfg.Pairs.Slowdowns(a.spec.PairType, b.spec.PairType)
	if ok && max(sa, sb) > bp.Bound()+1e-9 {
		e.res.Colocations.OverBound++
		if e.ex == nil { // nothing ends it on purpose
			e.res.Colocations.SustainedOver++
		}
	}
}
