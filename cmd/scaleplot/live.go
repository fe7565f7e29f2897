package main

import (
	"fmt"
	"image/color"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// liveRun is one benchmark run: both modes on the same nodes and jobs.
type liveRun struct {
	id            string
	nodes, jobs   int
	nomad, caravn float64 // jobs per second
}

func (r liveRun) ratio() float64 { return r.caravn / r.nomad }

// liveRuns pairs each run's two modes; a run lacking either is an error,
// as a ratio needs both sides measured in the same run.
func liveRuns(t *table) ([]liveRun, error) {
	byID := map[string]*liveRun{}
	var order []string
	for i := range t.rows {
		v, err := t.need(i, "run", "nodes", "jobs", "mode", "jobs_per_s")
		if err != nil {
			return nil, err
		}
		nodes, err1 := strconv.Atoi(v[1])
		jobs, err2 := strconv.Atoi(v[2])
		rate, err3 := strconv.ParseFloat(v[4], 64)
		if err1 != nil || err2 != nil || err3 != nil || nodes <= 0 || rate <= 0 {
			return nil, fmt.Errorf("%s: row %d: nodes, jobs and jobs_per_s must be positive numbers", t.path, i+1)
		}
		r := byID[v[0]]
		if r == nil {
			r = &liveRun{id: v[0], nodes: nodes, jobs: jobs}
			byID[v[0]] = r
			order = append(order, v[0])
		}
		if r.nodes != nodes || r.jobs != jobs {
			return nil, fmt.Errorf("%s: row %d: run %s changes its nodes or jobs", t.path, i+1, v[0])
		}
		switch v[3] {
		case "nomad":
			r.nomad = rate
		case "caravan":
			r.caravn = rate
		default:
			return nil, fmt.Errorf("%s: row %d: mode %q: want nomad or caravan", t.path, i+1, v[3])
		}
	}
	var out []liveRun
	for _, id := range order {
		r := byID[id]
		if r.nomad == 0 || r.caravn == 0 {
			return nil, fmt.Errorf("%s: run %s lacks one of its two modes", t.path, id)
		}
		out = append(out, *r)
	}
	if len(out) == 0 {
		return nil, errNoRows
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].nodes < out[b].nodes })
	return out, nil
}

// plotLive draws each run's placement rate through caravan as a fraction
// of Nomad's own in the same run, against the number of nodes, with the
// issue's 0.5× goal.
func plotLive(runs []liveRun, path string) error {
	p := plot.New()
	p.Title.Text = "Placement rate through caravan ÷ Nomad alone, same run"
	p.X.Label.Text, p.Y.Label.Text = "simulated Nomad clients (8 GPUs each, log)", "ratio of jobs placed per second"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.ConstantTicks(nodeTicks(runs))
	p.Add(plotter.NewGrid())
	pts := make(plotter.XYs, len(runs))
	hi := 1.0
	for i, r := range runs {
		pts[i].X, pts[i].Y = float64(r.nodes), r.ratio()
		hi = max(hi, r.ratio())
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(4), Color: color.RGBA{0, 114, 178, 255}}
	goal, err := hline(float64(runs[0].nodes)*0.8, float64(runs[len(runs)-1].nodes)*1.25, 0.5)
	if err != nil {
		return err
	}
	goal.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(sc, goal)
	p.Legend.Add("one benchmark run", sc)
	p.Legend.Add("goal ≥ 0.5×", goal)
	p.Legend.Left = true
	p.X.Min, p.X.Max = float64(runs[0].nodes)*0.8, float64(runs[len(runs)-1].nodes)*1.25
	p.Y.Min, p.Y.Max = 0, hi*1.1
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func nodeTicks(runs []liveRun) []plot.Tick {
	var ts []plot.Tick
	seen := map[int]bool{}
	for _, r := range runs {
		if !seen[r.nodes] {
			seen[r.nodes] = true
			ts = append(ts, plot.Tick{Value: float64(r.nodes), Label: strconv.Itoa(r.nodes)})
		}
	}
	return ts
}

// hline is a horizontal line at y from x0 to x1.
func hline(x0, x1, y float64) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return nil, err
	}
	l.Color = color.RGBA{213, 94, 0, 255}
	return l, nil
}
