package profile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Curve is one measured convergence run at a global batch size.
type Curve struct {
	GlobalBatch int
	Iteration   []float64
	Metric      []float64
}

func loadCurves(dir string) ([]Curve, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "validation-*.csv"))
	var out []Curve
	for _, p := range paths {
		b, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "validation-"), ".csv"))
		if err != nil || b < 1 {
			return nil, fmt.Errorf("%s: file name must be validation-<global batch>.csv", p)
		}
		_, vals, err := readFloats(p, "iteration", "metric")
		if err != nil {
			return nil, err
		}
		c := Curve{GlobalBatch: b}
		for _, v := range vals {
			c.Iteration = append(c.Iteration, v[0])
			c.Metric = append(c.Metric, v[1])
		}
		if len(c.Iteration) > 0 {
			out = append(out, c)
		}
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	sort.Slice(out, func(a, b int) bool { return out[a].GlobalBatch < out[b].GlobalBatch })
	return out, nil
}

// CurveFor returns the curve whose global batch is nearest (in log scale)
// to batch, or nil when the model has none.
func (m *Model) CurveFor(batch float64) *Curve {
	var best *Curve
	bestD := math.Inf(1)
	for i := range m.Curves {
		d := math.Abs(math.Log(float64(m.Curves[i].GlobalBatch)) - math.Log(max(batch, 1)))
		if d < bestD {
			best, bestD = &m.Curves[i], d
		}
	}
	return best
}

// LossAt maps a job's completed fraction (0..1) to (step, loss) on this
// curve, for Optimus-style online fitting. The curve's iterations are
// rescaled so the job's total steps span the whole curve, and the metric
// is linearly interpolated. Metrics that rise (accuracy) become a loss as
// 1.01·max − metric, so every curve is positive and decreasing-ish.
func (c *Curve) LossAt(frac, totalSteps float64) (step, loss float64) {
	frac = min(max(frac, 0), 1)
	n := len(c.Iteration)
	last := c.Iteration[n-1]
	x := frac * last
	i := sort.SearchFloat64s(c.Iteration, x)
	var metric float64
	switch {
	case i == 0:
		metric = c.Metric[0]
	case i >= n:
		metric = c.Metric[n-1]
	default:
		x0, x1 := c.Iteration[i-1], c.Iteration[i]
		w := 0.0
		if x1 > x0 {
			w = (x - x0) / (x1 - x0)
		}
		metric = c.Metric[i-1]*(1-w) + c.Metric[i]*w
	}
	return frac * totalSteps, c.toLoss(metric)
}

func (c *Curve) toLoss(metric float64) float64 {
	if c.Metric[len(c.Metric)-1] <= c.Metric[0] {
		return metric
	}
	hi := 0.0
	for _, v := range c.Metric {
		hi = max(hi, v)
	}
	return 1.01*hi - metric
}
