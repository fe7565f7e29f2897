package main

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// policyRow is one ordering's CPU per decision, the lowest and highest of
// the runs reported.
type policyRow struct {
	ordering, variant string
	low, high         float64
}

func policyRows(t *table) ([]policyRow, error) {
	var out []policyRow
	for i := range t.rows {
		v, err := t.need(i, "ordering", "variant", "cpu_ms_low", "cpu_ms_high")
		if err != nil {
			return nil, err
		}
		lo, err1 := strconv.ParseFloat(v[2], 64)
		hi, err2 := strconv.ParseFloat(v[3], 64)
		if err1 != nil || err2 != nil || lo <= 0 || hi < lo {
			return nil, fmt.Errorf("%s: row %d: want 0 < cpu_ms_low ≤ cpu_ms_high", t.path, i+1)
		}
		out = append(out, policyRow{v[0], v[1], lo, hi})
	}
	if len(out) == 0 {
		return nil, errNoRows
	}
	return out, nil
}

// plotPolicy draws each ordering's range of CPU ms per decision on a log
// axis, one series per variant, with the 10 ms goal.
func plotPolicy(rows []policyRow, path string) error {
	var names, variants []string
	at, seenV := map[string]int{}, map[string]bool{}
	for _, r := range rows {
		if _, ok := at[r.ordering]; !ok {
			at[r.ordering] = len(names)
			names = append(names, r.ordering)
		}
		if !seenV[r.variant] {
			seenV[r.variant] = true
			variants = append(variants, r.variant)
		}
	}
	p := plot.New()
	p.Title.Text = "Policy core, 10,000 nodes × 100,000 queued jobs"
	p.Y.Label.Text = "CPU ms per decision (log)"
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.NominalX(names...)
	p.Add(plotter.NewGrid())
	lo, hi := 10.0, 10.0
	for k, variant := range variants {
		c := palette[k%len(palette)]
		// past the palette's colours, bars are dashed: every variant
		// stays apart from the one sharing its colour
		dashes := dashings[k/len(palette)%len(dashings)]
		var bar *plotter.Line
		for _, r := range rows {
			if r.variant != variant {
				continue
			}
			// bars 0.2 apart, closer where many variants would overlap the next ordering's
			x := float64(at[r.ordering]) + (float64(k)-float64(len(variants)-1)/2)*min(0.2, 0.8/float64(len(variants)))
			// A single figure (low = high) still shows: the bar spans at least 4 %.
			var err error
			bar, err = plotter.NewLine(plotter.XYs{{X: x, Y: r.low / 1.02}, {X: x, Y: max(r.high, r.low*1.02)}})
			if err != nil {
				return err
			}
			bar.Color, bar.Width, bar.Dashes = c, vg.Points(5), dashes
			p.Add(bar)
			lo, hi = min(lo, r.low), max(hi, r.high)
		}
		p.Legend.Add(variant, bar) // a stroke of the variant's bar
	}
	goal, err := hline(-0.5, float64(len(names))-0.5, 10)
	if err != nil {
		return err
	}
	goal.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(goal)
	p.Legend.Add("goal < 10 ms", goal)
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	height := 6 * vg.Inch
	// the legend sits above the bars: its rows take this share of the
	// axis, added on top of the data's decades (log scale)
	if share := float64(len(variants)+1) * 11 / (float64(height.Points()) - 60); share < 0.8 {
		p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, share/(1-share))
	}
	return p.Save(8*vg.Inch, height, path)
}

// dashings are the bars' strokes, one per turn through the palette.
var dashings = [][]vg.Length{nil, {vg.Points(3), vg.Points(2)}, {vg.Points(1), vg.Points(1.5)}}

// palette is Okabe and Ito's colour-blind-safe set (its vermilion is the
// goal's line, its yellow too faint on white).
var palette = []color.RGBA{{0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{86, 180, 233, 255}, {0, 0, 0, 255}}
