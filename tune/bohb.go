package tune

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// AlgBOHB is BOHB (Falkner et al., ICML'18): Hyperband's brackets run one
// after another, and each bracket's configurations come, but for a random
// third, from a TPE model of the results so far.
const AlgBOHB = "bohb"

// BOHB's settings, the paper's defaults.
const (
	bohbRandomFraction = 1.0 / 3
	bohbTopFraction    = 0.15
	bohbCandidates     = 64
	bohbBandwidth      = 3.0  // widening of the good KDE when sampling
	bohbMinBandwidth   = 1e-3 // in the unit cube
)

// nextBOHB runs brackets in order: bracket b starts (draws its
// configurations) once b−1 has finished.
func (t *Tuner) nextBOHB(out []Action) []Action {
	for b := range t.Brackets {
		if !t.Brackets[b].Started {
			t.startBracket(b)
		}
		out = t.nextSync(b, out)
		if !t.bracketDone(b) {
			return out
		}
	}
	return out
}

func (t *Tuner) bracketDone(b int) bool {
	for _, id := range t.bracketTrials(b) {
		switch t.Trials[id].Status {
		case Pending, Running, Paused:
			return false
		}
	}
	return true
}

// startBracket appends bracket b's trials, configurations from the model.
func (t *Tuner) startBracket(b int) {
	br := &t.Brackets[b]
	br.First, br.Started = len(t.Trials), true
	for i := 0; i < br.N; i++ {
		id := len(t.Trials)
		t.Trials = append(t.Trials, Trial{ID: id, Bracket: b, Config: t.propose(id), Status: Pending})
	}
}

// propose draws configuration id: at random with probability 1/3 or
// without enough results, else the candidate (sampled around the good
// results) with the best ratio of good to bad density.
func (t *Tuner) propose(id int) Config {
	r := rand.New(rand.NewPCG(uint64(t.Spec.Seed), uint64(id)+1<<40))
	good, bad := t.goodBad()
	if r.Float64() < bohbRandomFraction || good == nil {
		return sampleConfig(t.Spec.Params, t.Spec.Seed, id)
	}
	lg, lb := newKDE(good, t.Spec.Params), newKDE(bad, t.Spec.Params)
	best, bestScore := []float64(nil), math.Inf(-1)
	for c := 0; c < bohbCandidates; c++ {
		x := lg.sample(r)
		if s := lg.logPDF(x) - lb.logPDF(x); s > bestScore {
			best, bestScore = x, s
		}
	}
	return decode(t.Spec.Params, best)
}

// goodBad splits the results at the largest budget with enough of them
// (one more than the dimensions, and at least one bad) into the best 15 %
// and the rest, as points in the unit cube. nil when no budget has enough.
func (t *Tuner) goodBad() (good, bad [][]float64) {
	type res struct {
		x []float64
		m float64
	}
	byBudget := map[float64][]res{}
	for _, tr := range t.Trials {
		for r, m := range tr.Metrics {
			if !math.IsNaN(m) {
				b := t.RungBudget(tr.Bracket, r)
				byBudget[b] = append(byBudget[b], res{encode(t.Spec.Params, tr.Config), m})
			}
		}
	}
	need := len(t.Spec.Params) + 2
	budgets := make([]float64, 0, len(byBudget))
	for b := range byBudget {
		budgets = append(budgets, b)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(budgets)))
	for _, b := range budgets {
		rs := byBudget[b]
		if len(rs) < need {
			continue
		}
		sort.SliceStable(rs, func(i, j int) bool { return t.better(rs[i].m, rs[j].m) })
		n := max(len(t.Spec.Params)+1, int(math.Ceil(bohbTopFraction*float64(len(rs)))))
		n = min(n, len(rs)-1)
		for i, x := range rs {
			if i < n {
				good = append(good, x.x)
			} else {
				bad = append(bad, x.x)
			}
		}
		return good, bad
	}
	return nil, nil
}

// encode maps a configuration into the unit cube (choices: their index).
func encode(params []Param, c Config) []float64 {
	x := make([]float64, len(params))
	for i, p := range params {
		v, _ := strconv.ParseFloat(c[p.Name], 64)
		switch p.Type {
		case ParamChoice:
			for k, s := range p.Values {
				if s == c[p.Name] {
					x[i] = float64(k)
				}
			}
		case ParamLogUniform:
			x[i] = unit(math.Log(v), math.Log(p.Min), math.Log(p.Max))
		default:
			x[i] = unit(v, p.Min, p.Max)
		}
	}
	return x
}

func unit(v, lo, hi float64) float64 {
	if hi <= lo {
		return 0.5
	}
	return min(1, max(0, (v-lo)/(hi-lo)))
}

// decode maps a point of the unit cube back to a configuration.
func decode(params []Param, x []float64) Config {
	c := Config{}
	for i, p := range params {
		switch p.Type {
		case ParamChoice:
			c[p.Name] = p.Values[int(x[i])]
		case ParamLogUniform:
			c[p.Name] = formatFloat(math.Exp(math.Log(p.Min) + x[i]*(math.Log(p.Max)-math.Log(p.Min))))
		case ParamInt:
			c[p.Name] = strconv.FormatInt(int64(math.Round(p.Min+x[i]*(p.Max-p.Min))), 10)
		default:
			c[p.Name] = formatFloat(p.Min + x[i]*(p.Max-p.Min))
		}
	}
	return c
}

// kde is a product kernel density: Gaussian per continuous dimension
// (Scott's bandwidth), Aitchison–Aitken per choice.
type kde struct {
	pts    [][]float64
	bw     []float64
	params []Param
}

func newKDE(pts [][]float64, params []Param) *kde {
	k := &kde{pts: pts, params: params, bw: make([]float64, len(params))}
	n := float64(len(pts))
	for d := range params {
		var mean, sq float64
		for _, p := range pts {
			mean += p[d]
		}
		mean /= n
		for _, p := range pts {
			sq += (p[d] - mean) * (p[d] - mean)
		}
		sd := math.Sqrt(sq / max(n-1, 1))
		k.bw[d] = max(bohbMinBandwidth, sd*math.Pow(n, -1.0/(float64(len(params))+4)))
		if params[d].Type == ParamChoice {
			k.bw[d] = min(0.5, max(0.1, k.bw[d])) // probability of another category
		}
	}
	return k
}

// sample perturbs a random point, the continuous dimensions with a
// bandwidth widened by bohbBandwidth.
func (k *kde) sample(r *rand.Rand) []float64 {
	base := k.pts[r.IntN(len(k.pts))]
	x := make([]float64, len(base))
	for d, p := range k.params {
		if p.Type == ParamChoice {
			x[d] = base[d]
			if r.Float64() < k.bw[d] {
				x[d] = float64(r.IntN(len(p.Values)))
			}
			continue
		}
		x[d] = min(1, max(0, base[d]+r.NormFloat64()*k.bw[d]*bohbBandwidth))
	}
	return x
}

// logPDF is the log density at x (up to a constant per dimension).
func (k *kde) logPDF(x []float64) float64 {
	sum := 0.0
	for _, p := range k.pts {
		l := 0.0
		for d, prm := range k.params {
			if prm.Type == ParamChoice {
				if x[d] == p[d] {
					l += math.Log(1 - k.bw[d])
				} else {
					l += math.Log(k.bw[d] / float64(max(len(prm.Values)-1, 1)))
				}
				continue
			}
			z := (x[d] - p[d]) / k.bw[d]
			l += -0.5*z*z - math.Log(k.bw[d])
		}
		sum += math.Exp(l)
	}
	return math.Log(sum/float64(len(k.pts)) + 1e-300)
}
