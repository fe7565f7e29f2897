package sim

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette is Okabe and Ito's colour-blind-safe set: one colour per policy
// and, since policies often tie (their lines overlap exactly), a dash
// pattern per policy as well, so a hidden line still shows through.
var palette = []color.RGBA{
	{0, 0, 0, 255}, {230, 159, 0, 255}, {86, 180, 233, 255}, {0, 158, 115, 255},
	{213, 94, 0, 255}, {0, 114, 178, 255}, {204, 121, 167, 255}, {240, 228, 66, 255},
}

var dashes = [][]vg.Length{
	nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(12), vg.Points(4)}, {vg.Points(4), vg.Points(6)},
}

// Plot writes jct_cdf, queue and gpus charts for a set of runs into dir,
// in format "svg" or "png", each file named prefix + chart + "." + format.
func Plot(dir, prefix, format string, rs []*Result) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("plot format %q: want svg or png", format)
	}
	unit, per := timeUnit(rs)
	charts := []struct {
		name, title, x, y string
		jct               bool
		series            func(*Result) plotter.XYs
	}{
		{"jct_cdf", "JCT CDF (lower-left is better)", "job completion time (log)", "fraction of jobs finished within", true, jctCDF},
		{"queue", "Queued jobs over time", "time since the first submission (" + unit + ")", "queued jobs", false, func(r *Result) plotter.XYs {
			return timeSeries(r, per, func(s Sample) float64 { return float64(s.Queued) })
		}},
		{"gpus", "GPUs allocated over time", "time since the first submission (" + unit + ")", "GPUs allocated", false, func(r *Result) plotter.XYs {
			return timeSeries(r, per, func(s Sample) float64 { return s.AllocGPUs })
		}},
	}
	for _, c := range charts {
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text, p.Y.Label.Text = c.x, c.y
		p.Add(plotter.NewGrid())
		if c.jct {
			p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, durationTicks{}
			p.Y.Min, p.Y.Max = 0, 1
		} else {
			p.Y.Min = 0
		}
		var leg []legendEntry
		for i, r := range rs {
			xy := c.series(r)
			if len(xy) == 0 {
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return fmt.Errorf("%s %s: %w", c.name, r.Policy, err)
			}
			l.Color = palette[i%len(palette)]
			l.Dashes = dashes[i%len(dashes)]
			l.Width = vg.Points(1.5)
			p.Add(l)
			leg = append(leg, legendEntry{r.Policy, l})
		}
		if err := save(p, leg, filepath.Join(dir, prefix+c.name+"."+format), format); err != nil {
			return err
		}
	}
	return nil
}

type legendEntry struct {
	name string
	line plot.Thumbnailer
}

// save draws the chart with its legend in columns underneath, where it
// never hides a line.
func save(p *plot.Plot, leg []legendEntry, path, format string) error {
	const cols = 2
	rows := (len(leg) + cols - 1) / cols
	entryH := plot.NewLegend().TextStyle.Rectangle("Xg").Size().Y * 1.3
	legH := vg.Length(rows)*entryH + vg.Points(12)
	w, h := 8*vg.Inch, 5*vg.Inch+legH
	cv, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return err
	}
	dc := draw.New(cv)
	p.Draw(draw.Crop(dc, 0, 0, legH, 0))
	strip := draw.Crop(dc, vg.Points(40), 0, vg.Points(6), -(h - legH))
	colW := (strip.Max.X - strip.Min.X) / cols
	for c := 0; c < cols; c++ {
		part := plot.NewLegend()
		part.Top, part.Left = true, true
		for _, e := range leg[min(c*rows, len(leg)):min((c+1)*rows, len(leg))] {
			part.Add(e.name, e.line)
		}
		part.Draw(draw.Crop(strip, colW*vg.Length(c), -(colW * vg.Length(cols-1-c)), 0, 0))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := cv.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// durationTicks marks a log axis of seconds at 1-2-5 steps of seconds,
// minutes, hours and days, labelled as such ("30s", "10m", "2h", "5d").
type durationTicks struct{}

func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	units := []struct {
		s    float64
		name string
	}{{1, "s"}, {60, "m"}, {3600, "h"}, {86400, "d"}}
	var major []float64
	for _, u := range units {
		for _, k := range []float64{1, 2, 5, 10, 20, 30} {
			v := k * u.s
			if u.name == "h" && k > 12 {
				continue // 20h and 30h: days take over
			}
			major = append(major, v)
		}
	}
	for d := 100.0; d <= 1e5; d *= 10 { // beyond 30 days: powers of ten of days
		major = append(major, d*86400)
	}
	sort.Float64s(major)
	var ts []plot.Tick
	for _, v := range major {
		if v >= lo && v <= hi {
			ts = append(ts, plot.Tick{Value: v, Label: durationLabel(v)})
		}
	}
	if len(ts) > 8 { // keep the labels readable: drop every other one
		var kept []plot.Tick
		for i, t := range ts {
			if i%2 == 0 {
				kept = append(kept, t)
			} else {
				kept = append(kept, plot.Tick{Value: t.Value})
			}
		}
		ts = kept
	}
	return ts
}

func durationLabel(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%gs", s)
	case s < 3600:
		return fmt.Sprintf("%gm", s/60)
	case s < 86400:
		return fmt.Sprintf("%gh", s/3600)
	}
	return fmt.Sprintf("%gd", math.Round(s/86400))
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

// timeUnit is hours, or days for runs longer than three days.
func timeUnit(rs []*Result) (string, float64) {
	span := 0.0
	for _, r := range rs {
		if n := len(r.Series); n > 0 {
			span = max(span, r.Series[n-1].T)
		}
	}
	if span > 3*86400 {
		return "days", 86400
	}
	return "h", 3600
}

func timeSeries(r *Result, per float64, get func(Sample) float64) plotter.XYs {
	xy := make(plotter.XYs, 0, len(r.Series))
	for _, s := range r.Series {
		xy = append(xy, plotter.XY{X: s.T / per, Y: get(s)})
	}
	return xy
}
