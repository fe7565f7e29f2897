package colocate

import (
	"fmt"
	"math"
	"sync"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// ExplorePairs is Explore for the policy core: a place.PairPredictor that
// learns during a run. It answers a pair of job types from what the run
// measured first (a type pair judged good shares, one judged bad never
// does); an unjudged pair may share on trial (a probe) when its
// optimistic estimate — the best the pair of models measured at any batch
// size this run, else the held-out prediction — is at most Bound ×
// Factor, no probe of that type pair is in flight, and fewer than
// MaxInFlight probes are.
//
// The executor closes the loop: it reports each new co-location
// (Shared: a probe's window comes back), the slowdowns it measured when
// a probe's window ends or the pair parts (Measured: over the bound it
// sends the newcomer back to the queue, losing the probe's progress plus
// RestartCost), and the end of each decision (Settle). The simulator
// knows the measured slowdowns; a live scheduler would read them from
// the two jobs' progress rates against their rates alone.
type ExplorePairs struct {
	base    PlacementPairs // Predicted rule: memory fit and held-out prediction
	bound   float64
	cfg     Explore
	mu      sync.Mutex
	known   map[[2]profile.GavelType][2]float64 // measured slowdowns, in typeKey order
	best    modelPrior
	flying  map[[2]profile.GavelType]int // probes in flight per type pair
	nFlying int
	// pending are probes promised while placing one decision: type pair
	// → the two job IDs it was promised to (one promise per job), until
	// Settle. A placer asks before it commits, so a promise may go unused.
	pending map[[2]profile.GavelType][2]string
	holds   map[string]bool
}

var _ place.PairPredictor = (*ExplorePairs)(nil)

// NewExplorePairs explores around base's predictor (base.Rule is
// ignored: the Predicted rule's fit and memory check are used) at bound,
// with cfg's window, restart cost, factor and cap (MaxInFlight 0: 1).
func NewExplorePairs(base PlacementPairs, bound float64, cfg Explore) (*ExplorePairs, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if !(bound >= 1) {
		return nil, fmt.Errorf("colocate: explore bound %v must be ≥ 1", bound)
	}
	base.Rule = Predicted
	cfg.MaxInFlight = max(cfg.MaxInFlight, 1)
	return &ExplorePairs{base: base, bound: bound, cfg: cfg,
		known: map[[2]profile.GavelType][2]float64{}, best: modelPrior{},
		flying: map[[2]profile.GavelType]int{}, pending: map[[2]profile.GavelType][2]string{}, holds: map[string]bool{}}, nil
}

// PlacementName is "colocate-explore".
func (*ExplorePairs) PlacementName() string { return "colocate-explore" }

// Class hashes the job's type, as PlacementPairs does.
func (p *ExplorePairs) Class(j *policy.Job) uint32 { return p.base.Class(j) }

// Slowdown implements place.PairPredictor: the run's measurement of the
// type pair, else a probe's promise (its estimate, at most the bound).
func (p *ExplorePairs) Slowdown(a, b *policy.Job) (float64, bool) {
	ta, tb := TypeOf(a), TypeOf(b)
	if _, fits := p.base.measured(ta, tb); !fits {
		return 0, false
	}
	k := typeKey(ta, tb)
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.known[k]; ok {
		return sideOf(s, k, ta), true
	}
	est, ok := p.promise(k, a, b)
	return math.Min(est, p.bound), ok
}

// sideOf is the slowdown of type t in a pair measured in key order.
func sideOf(s [2]float64, k [2]profile.GavelType, t profile.GavelType) float64 {
	if t == k[0] {
		return s[0]
	}
	return s[1]
}

// promise decides whether the unjudged pair of a and b may be probed and
// reserves it for these two jobs until Settle.
func (p *ExplorePairs) promise(k [2]profile.GavelType, a, b *policy.Job) (float64, bool) {
	ids := pairKey(a.ID, b.ID)
	if held, ok := p.pending[k]; ok {
		return p.estimate(a, b), held == ids
	}
	if p.flying[k] > 0 || p.holds[a.ID] || p.holds[b.ID] || p.nFlying+len(p.pending) >= p.cfg.MaxInFlight {
		return 0, false
	}
	est := p.estimate(a, b)
	if !(est <= p.bound*p.cfg.Factor+1e-9) {
		return 0, false
	}
	p.pending[k] = ids
	p.holds[a.ID], p.holds[b.ID] = true, true
	return est, true
}

// estimate is the optimistic slowdown of the pair: the best its models
// measured this run at any batch sizes, else the predictor's larger side.
func (p *ExplorePairs) estimate(a, b *policy.Job) float64 {
	if v, ok := p.best[pairKey(a.Model, b.Model)]; ok && !p.cfg.NoModelPrior {
		return v
	}
	sa, oka := p.base.Slowdown(a, b)
	sb, okb := p.base.Slowdown(b, a)
	if !oka || !okb {
		return math.Inf(1)
	}
	return math.Max(sa, sb)
}

// Shared is the executor's report that a and b began sharing a GPU: an
// unjudged type pair is a probe, judged after the returned window
// (seconds); 0 for a pair the run has judged.
func (p *ExplorePairs) Shared(a, b *policy.Job) float64 {
	k := typeKey(TypeOf(a), TypeOf(b))
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.known[k]; ok {
		return 0
	}
	p.flying[k]++
	p.nFlying++
	return p.cfg.Window
}

// Measured records a probe's measured slowdowns (a's sa, b's sb) and
// reports whether the pair is over the bound, i.e. the newcomer must go.
// Slowdowns ≤ 0 mean nothing was measured: the pair stays unjudged.
func (p *ExplorePairs) Measured(a, b *policy.Job, sa, sb float64) bool {
	ta, tb := TypeOf(a), TypeOf(b)
	k := typeKey(ta, tb)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flying[k] > 0 {
		p.flying[k]--
		p.nFlying--
	}
	if !(sa > 0 && sb > 0) {
		return false // nothing measured (e.g. a type without measurements): still unjudged
	}
	if ta != k[0] {
		sa, sb = sb, sa
	}
	p.known[k] = [2]float64{sa, sb}
	worst := math.Max(sa, sb)
	p.best.record(ta.Model, tb.Model, worst)
	return worst > p.bound+1e-9
}

// Settle ends a decision: probes promised but not begun lapse.
func (p *ExplorePairs) Settle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.pending)
	clear(p.holds)
}

// RestartCost is the work (seconds) an evicted newcomer repeats beyond
// the progress it lost in the probe.
func (p *ExplorePairs) RestartCost() float64 { return p.cfg.Restart }

// Bound is the slowdown bound probes are judged by.
func (p *ExplorePairs) Bound() float64 { return p.bound }
