package tune

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// Config is one point of the search space: parameter name → value, as the
// string sent in dispatch meta.
type Config map[string]string

// sampleConfig draws configuration i of a seeded random search. It is a
// pure function of (seed, i), so the tuner keeps no generator state and a
// restarted tuner draws the same configurations.
func sampleConfig(params []Param, seed int64, i int) Config {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(i)+1))
	c := Config{}
	for _, p := range params {
		c[p.Name] = p.sample(r)
	}
	return c
}

func (p *Param) sample(r *rand.Rand) string {
	switch p.Type {
	case ParamChoice:
		return p.Values[r.IntN(len(p.Values))]
	case ParamInt:
		return strconv.FormatInt(int64(p.Min)+r.Int64N(int64(p.Max-p.Min)+1), 10)
	case ParamLogUniform:
		lo, hi := math.Log(p.Min), math.Log(p.Max)
		return formatFloat(math.Exp(lo + r.Float64()*(hi-lo)))
	default:
		return formatFloat(p.Min + r.Float64()*(p.Max-p.Min))
	}
}

// formatFloat keeps 4 significant digits: meta stays readable and the
// value the trial gets is the value the tuner reports.
func formatFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// points is the parameter's grid values (none for a malformed parameter:
// Validate says why).
func (p *Param) points() []string {
	if p.Points < 0 || p.Points > maxTrials {
		return nil
	}
	switch p.Type {
	case ParamChoice:
		return p.Values
	case ParamInt:
		if p.Points == 0 || float64(p.Points) > p.Max-p.Min {
			if !(p.Max-p.Min < maxTrials) {
				return nil
			}
			var out []string
			for v := int64(p.Min); v <= int64(p.Max); v++ {
				out = append(out, strconv.FormatInt(v, 10))
			}
			return out
		}
	}
	out := make([]string, p.Points)
	for k := range out {
		t := 0.5
		if p.Points > 1 {
			t = float64(k) / float64(p.Points-1)
		}
		switch p.Type {
		case ParamLogUniform:
			lo, hi := math.Log(p.Min), math.Log(p.Max)
			out[k] = formatFloat(math.Exp(lo + t*(hi-lo)))
		case ParamInt:
			out[k] = strconv.FormatInt(int64(math.Round(p.Min+t*(p.Max-p.Min))), 10)
		default:
			out[k] = formatFloat(p.Min + t*(p.Max-p.Min))
		}
	}
	return out
}

func gridSize(params []Param) int {
	if len(params) == 0 {
		return 0
	}
	n := 1
	for i := range params {
		n *= len(params[i].points())
		if n > maxTrials {
			return n
		}
	}
	return n
}

// gridConfig is point i of the grid, the first parameter varying slowest.
func gridConfig(params []Param, i int) Config {
	c := Config{}
	for k := len(params) - 1; k >= 0; k-- {
		pts := params[k].points()
		c[params[k].Name] = pts[i%len(pts)]
		i /= len(pts)
	}
	return c
}
