package tune

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// Workload is one model's tuning problem, from its measured profile:
// the global batch size is the hyperparameter (each measured convergence
// curve is one configuration), and step times come from placements.csv.
type Workload struct {
	Model string
	// Batches are the global batch sizes with a measured curve.
	Batches []int
	// Maximize is true when the curve's metric rises (accuracy).
	Maximize bool
	// Samples is the training every curve covers (the shortest curve's
	// last iteration × its batch): the budget of the final rung.
	Samples float64
	// a + c·b is the one-GPU step time at local batch b (least squares
	// over placements.csv's single-GPU rows).
	a, c float64
	// MaxLocal is the largest local batch placements.csv measured on one
	// GPU: what fits in its memory. A larger local batch is run as
	// gradient accumulation over micro-batches of at most MaxLocal.
	MaxLocal float64
	perNode  int
	m        *profile.Model
	curves   map[int]*profile.Curve
}

// LoadWorkloads loads every model under dir with both step times and
// convergence curves, sorted by name.
func LoadWorkloads(dir string, perNode int) ([]*Workload, error) {
	set, err := profile.LoadSet(dir)
	if err != nil {
		return nil, err
	}
	var out []*Workload
	for _, name := range set.Names() {
		w, err := newWorkload(set.Models[name], filepath.Join(dir, name, "placements.csv"), perNode)
		if err != nil {
			return nil, err
		}
		if w != nil {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no model with both placements.csv and validation-*.csv", dir)
	}
	return out, nil
}

func newWorkload(m *profile.Model, placements string, perNode int) (*Workload, error) {
	if len(m.Curves) < 2 {
		return nil, nil
	}
	w := &Workload{Model: m.Name, m: m, perNode: max(perNode, 1), curves: map[int]*profile.Curve{}, Samples: math.Inf(1)}
	for i := range m.Curves {
		c := &m.Curves[i]
		w.Batches = append(w.Batches, c.GlobalBatch)
		w.curves[c.GlobalBatch] = c
		w.Samples = min(w.Samples, c.Iteration[len(c.Iteration)-1]*float64(c.GlobalBatch))
	}
	sort.Ints(w.Batches)
	first := m.Curves[0]
	w.Maximize = first.Metric[len(first.Metric)-1] > first.Metric[0]
	var err error
	if w.a, w.c, w.MaxLocal, err = singleGPUFit(placements); err != nil {
		return nil, err
	}
	return w, nil
}

// singleGPUFit fits step = a + c·local_bsz over the placement "1" rows,
// and returns the largest local_bsz measured there.
func singleGPUFit(path string) (a, c, maxLocal float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	var xs, ys []float64
	for i, r := range recs {
		if i == 0 || len(r) < 3 || r[0] != "1" {
			continue
		}
		x, err1 := strconv.ParseFloat(r[1], 64)
		y, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil {
			return 0, 0, 0, fmt.Errorf("%s:%d: local_bsz and step_time must be numbers", path, i+1)
		}
		xs, ys = append(xs, x), append(ys, y)
		maxLocal = max(maxLocal, x)
	}
	if len(xs) < 2 {
		return 0, 0, 0, fmt.Errorf("%s: need two single-GPU rows to fit step time by batch", path)
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	n := float64(len(xs))
	c = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	a = (sy - c*sx) / n
	if c <= 0 || a < 0 { // flat or odd data: all fixed cost at the mean
		return sy / n, 1e-9, maxLocal, nil
	}
	return a, c, maxLocal, nil
}

// micro is how many micro-batches a local batch takes: one per MaxLocal
// samples (gradient accumulation), each paying the fixed cost a.
func (w *Workload) micro(local float64) float64 {
	return math.Max(1, math.Ceil(local/w.MaxLocal-1e-9))
}

// StepTime is seconds per step of global batch b on w whole GPUs:
// compute at local batch b/w (accumulated over micro-batches when it
// exceeds what one GPU holds) plus the measured all-reduce of w GPUs.
func (w *Workload) StepTime(b, workers int) float64 {
	sync := max(0, w.m.StepTime(profile.Consolidated(workers, w.perNode))-w.m.StepTime([]int{1}))
	if workers == 1 {
		sync = 0
	}
	local := float64(b) / float64(workers)
	return w.micro(local)*w.a + w.c*local + sync
}

// Util is a trial's busy share of a GPU alone: the batch-proportional
// part of its step. The fixed part (launches, input, Python) is the idle
// gap co-located trials fill.
func (w *Workload) Util(b int) float64 {
	busy := w.c * float64(b)
	return min(1, max(0.05, busy/(w.micro(float64(b))*w.a+busy)))
}

// MemShare is the share of a GPU's memory a one-GPU trial of global batch
// b needs: its micro-batch over the largest one measured to fit. (Weights
// and optimizer state are in both; activations dominate at these sizes.)
func (w *Workload) MemShare(b int) float64 {
	return min(1, float64(b)/w.MaxLocal)
}

// Metric is the curve's metric for batch b after the given samples.
func (w *Workload) Metric(b int, samples float64) float64 {
	c := w.curves[b]
	it := samples / float64(b)
	i := sort.SearchFloat64s(c.Iteration, it)
	switch {
	case i == 0:
		return c.Metric[0]
	case i >= len(c.Iteration):
		return c.Metric[len(c.Metric)-1]
	}
	x0, x1 := c.Iteration[i-1], c.Iteration[i]
	t := (it - x0) / (x1 - x0)
	return c.Metric[i-1]*(1-t) + c.Metric[i]*t
}
