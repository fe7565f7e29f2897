package place

import (
	"math"
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// InterferenceConfig tunes the interference-aware placer.
type InterferenceConfig struct {
	// Threshold caps the predicted summed utilisation of jobs sharing a
	// GPU; default 1.0 (co-located jobs then do not contend for SMs).
	Threshold float64
	// Prior and PriorWeight seed the utilisation regression; defaults
	// DefaultUtilPrior and 5 pseudo-observations.
	Prior       *[4]float64
	PriorWeight float64
	// Pairs, when set, replaces the utilisation threshold by a bound on
	// pairwise slowdown: a worker joins a GPU only if it and every job
	// there keep predicted slowdowns ≤ SlowdownBound (default
	// DefaultSlowdownBound); the placer is then "interference-bounded".
	Pairs         PairPredictor
	SlowdownBound float64
}

// Interference is Horus' interference-aware packing. Whole-GPU gangs are
// consolidated as usual. A fractional worker only joins a GPU that already
// has work if the predicted utilisations on it stay under Threshold; among
// those it packs the busiest (so whole GPUs stay free), preferring nodes the
// gang already uses. A job's own observed Util, when > 0, replaces the
// prediction, and running jobs' observed utilisations train the model.
type Interference struct {
	cfg  InterferenceConfig
	pred *UtilPredictor
	seen map[string]bool
	// byModel caches predictions per feature set while the model stands
	// still (at version): every queued job is predicted on every decision,
	// and a cluster runs few distinct models.
	byModel map[policy.ModelFeatures]float64
	version int
}

// NewInterference returns the interference-aware placer.
func NewInterference(cfg InterferenceConfig) *Interference {
	if cfg.Threshold <= 0 {
		cfg.Threshold = 1
	}
	prior := DefaultUtilPrior
	if cfg.Prior != nil {
		prior = *cfg.Prior
	}
	if cfg.PriorWeight <= 0 {
		cfg.PriorWeight = 5
	}
	if cfg.SlowdownBound <= 0 {
		cfg.SlowdownBound = DefaultSlowdownBound
	}
	return &Interference{cfg: cfg, pred: NewUtilPredictor(prior, cfg.PriorWeight), seen: map[string]bool{}}
}

// Name is "interference-aware", or "interference-bounded" with a pair
// predictor.
func (i *Interference) Name() string {
	if n, ok := i.cfg.Pairs.(interface{ PlacementName() string }); ok {
		return n.PlacementName() // a predictor may name its rule
	}
	if i.cfg.Pairs != nil {
		return "interference-bounded"
	}
	return "interference-aware"
}

// Predictor exposes the utilisation model (for Observe and inspection).
func (i *Interference) Predictor() *UtilPredictor { return i.pred }

// PredictUtil is the job's observed Util if known, else the prediction,
// rounded up to a multiple of utilStep: conservative by less than a step,
// and it lets the framework memoise failures per utilisation level.
func (i *Interference) PredictUtil(j *policy.Job) float64 {
	if j.Util > 0 {
		return roundUtil(j.Util)
	}
	if i.byModel == nil || i.version != i.pred.Observations() {
		i.byModel, i.version = map[policy.ModelFeatures]float64{}, i.pred.Observations()
	}
	u, ok := i.byModel[j.Features]
	if !ok {
		u = roundUtil(i.pred.Predict(j.Features))
		if len(i.byModel) < maxCachedModels {
			i.byModel[j.Features] = u
		}
	}
	return u
}

// maxCachedModels bounds the prediction cache (features are per model).
const maxCachedModels = 4096

func roundUtil(u float64) float64 { return math.Min(1, math.Ceil(u/utilStep-1e-9)*utilStep) }

// utilStep is the granularity of utilisation predictions.
const utilStep = 0.05

// Shape adds the predicted utilisation to the demand.
func (i *Interference) Shape(j *policy.Job, d policy.Demand) policy.ShapeKey {
	k := policy.DefaultShape(d)
	k.Extra = i.PredictUtil(j)
	if i.cfg.Pairs != nil { // jobs of one class fit or fail together
		k.Extra += 2 * float64(i.cfg.Pairs.Class(j))
	}
	return k
}

// ObserveSnapshot learns each running job's observed utilisation once.
func (i *Interference) ObserveSnapshot(s *policy.Snapshot) {
	observed := 0 // jobs of s now in seen
	for _, j := range s.Jobs {
		if !observable(j) {
			continue
		}
		observed++
		if !i.seen[j.ID] {
			i.seen[j.ID] = true
			i.pred.Observe(j.Features, j.Util)
		}
	}
	if observed < len(i.seen) { // job IDs are unique: some seen job is gone
		i.forget(s)
	}
}

func observable(j *policy.Job) bool {
	return j != nil && j.State == policy.Running && j.Util > 0
}

// forget drops seen jobs that no longer run with an observed utilisation.
func (i *Interference) forget(s *policy.Snapshot) {
	live := map[string]bool{}
	for _, j := range s.Jobs {
		if observable(j) {
			live[j.ID] = true
		}
	}
	for id := range i.seen {
		if !live[id] {
			delete(i.seen, id)
		}
	}
}

// Place chooses the gang's slots.
func (i *Interference) Place(j *policy.Job, d policy.Demand, c *policy.Capacity) (policy.Placement, string) {
	if d.WholeGPU() {
		return consolidate(c, d)
	}
	u := i.PredictUtil(j)
	ov := overlay{}
	var p policy.Placement
	for w := 0; w < d.Workers; w++ {
		ni, gi, ok := i.pick(j, c, d, u, ov, p)
		if !ok && i.cfg.Pairs != nil {
			return policy.Placement{}, i.boundText(d)
		}
		if !ok {
			return policy.Placement{}, "needs " + d.String() + " at predicted utilisation " +
				strconv.FormatFloat(u, 'f', 2, 64) + ": no GPU keeps co-located utilisation ≤ " +
				strconv.FormatFloat(i.cfg.Threshold, 'f', 2, 64)
		}
		g := ov.view(c, ni, gi)
		p.Slots = append(p.Slots, d.Slot(c.Nodes[ni].Name, &g))
		ov.take(c, ni, gi, d.Fraction, d.SlotMem(&g), u)
	}
	return p, ""
}

// pick chooses the GPU for one worker: a GPU on a node the gang already
// uses first, then a shared GPU over an empty one, then the highest
// resulting utilisation; ties go to the first GPU in node order.
//
// Only nodes the gang touched and nodes with partly used GPUs can offer
// more than an empty GPU, so those are scored first and the cluster's
// empty GPUs only when none of them qualifies: at 1,000 nodes most of the
// 8,000 GPUs a full scan looked at are skipped.
func (i *Interference) pick(j *policy.Job, c *policy.Capacity, d policy.Demand, u float64, ov overlay, p policy.Placement) (int, int, bool) {
	b := best{ni: -1}
	if len(p.Slots) > 0 {
		for ni := range c.Nodes {
			if ov.touches(ni) {
				i.score(j, c, d, u, ov, ni, 0, true, &b)
			}
		}
		if b.ni >= 0 {
			return b.ni, b.gi, true
		}
	}
	for _, empties := range []bool{false, true} {
		for ni := range c.Nodes {
			n := &c.Nodes[ni]
			if (empties && n.WholeFree == 0) || (!empties && n.Partial == 0) || n.FreeSum+1e-9 < d.Fraction || ov.touches(ni) {
				continue
			}
			i.score(j, c, d, u, ov, ni, 1, empties, &b)
		}
		if b.ni >= 0 {
			return b.ni, b.gi, true
		}
	}
	return -1, -1, false
}

// best is the highest-scoring GPU so far.
type best struct {
	ni, gi int
	score  [3]float64
}

// score offers node ni's GPUs to b: shared ones, and empty ones if
// empties; same is 0 for the gang's own nodes.
func (i *Interference) score(j *policy.Job, c *policy.Capacity, d policy.Demand, u float64, ov overlay, ni int, same float64, empties bool, b *best) {
	n := &c.Nodes[ni]
	touched := same == 0 // only the gang's own nodes need the overlay
	var buf policy.FreeGPU
	for gi := range n.GPUs {
		g := &n.GPUs[gi]
		if touched {
			buf = ov.view(c, ni, gi)
			g = &buf
		}
		empty := g.Whole()
		if (empty && !empties) || d.FitsOn(g) == 0 {
			continue
		}
		if !empty && !i.mayShare(j, c, ni, gi, g, u, touched && ov.has(ni, gi)) {
			continue
		}
		sc := [3]float64{same, b2f(empty), -(g.Util + u)}
		if b.ni < 0 || less3(sc, b.score) {
			b.ni, b.gi, b.score = ni, gi, sc
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func less3(a, b [3]float64) bool {
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}

// mayShare says whether a worker of j may join the partly used GPU g: by
// the pairwise slowdown bound with a pair predictor, else by the summed
// utilisation threshold. own says the gang already has a worker there.
func (i *Interference) mayShare(j *policy.Job, c *policy.Capacity, ni, gi int, g *policy.FreeGPU, u float64, own bool) bool {
	if i.cfg.Pairs != nil {
		return i.pairsOK(j, c, ni, gi, own)
	}
	return g.Util+u <= i.cfg.Threshold+1e-9
}
