package sim

import (
	"fmt"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot writes jct_cdf, queue and gpus charts for a set of runs into dir,
// in format "svg" or "png", each file named prefix + chart + "." + format.
func Plot(dir, prefix, format string, rs []*Result) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("plot format %q: want svg or png", format)
	}
	charts := []struct {
		name, title, x, y string
		logX              bool
		series            func(*Result) plotter.XYs
	}{
		{"jct_cdf", "JCT CDF", "JCT (s, log)", "fraction of jobs", true, jctCDF},
		{"queue", "Queued jobs over time", "time (h)", "queued jobs", false, func(r *Result) plotter.XYs {
			return timeSeries(r, func(s Sample) float64 { return float64(s.Queued) })
		}},
		{"gpus", "GPUs allocated over time", "time (h)", "GPUs", false, func(r *Result) plotter.XYs {
			return timeSeries(r, func(s Sample) float64 { return s.AllocGPUs })
		}},
	}
	for _, c := range charts {
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text, p.Y.Label.Text = c.x, c.y
		if c.logX {
			p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		}
		for i, r := range rs {
			xy := c.series(r)
			if len(xy) == 0 {
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return fmt.Errorf("%s %s: %w", c.name, r.Policy, err)
			}
			l.Color = plotutil.Color(i)
			l.Dashes = plotutil.Dashes(i / 7)
			p.Add(l)
			p.Legend.Add(r.Policy, l)
		}
		p.Legend.Top = true
		if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(dir, prefix+c.name+"."+format)); err != nil {
			return err
		}
	}
	return nil
}

func jctCDF(r *Result) plotter.XYs {
	v := make([]float64, 0, len(r.Jobs))
	for _, j := range r.Jobs {
		v = append(v, max(j.JCT, 1)) // log axis: clamp zero-length jobs
	}
	sort.Float64s(v)
	// At most ~500 points keep SVGs small.
	step := max(1, len(v)/500)
	var xy plotter.XYs
	for i := 0; i < len(v); i += step {
		xy = append(xy, plotter.XY{X: v[i], Y: float64(i+1) / float64(len(v))})
	}
	if n := len(v); n > 0 {
		xy = append(xy, plotter.XY{X: v[n-1], Y: 1})
	}
	return xy
}

func timeSeries(r *Result, get func(Sample) float64) plotter.XYs {
	xy := make(plotter.XYs, 0, len(r.Series))
	for _, s := range r.Series {
		xy = append(xy, plotter.XY{X: s.T / 3600, Y: get(s)})
	}
	return xy
}
