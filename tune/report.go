package tune

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy/fluid"
)

// CompareConfig is a grid of tuning simulations: every scenario (one
// workload alone, and all of them together) × algorithm × cluster size,
// under each planner mode.
type CompareConfig struct {
	GPUs       []int
	Algorithms []string
	// Reduction is η per algorithm (default 3 for sha, 2 for asha: with
	// the 6–8 batch sizes a model has, η = 3 leaves ASHA's top rung empty).
	Reduction map[string]float64
	Modes     []fluid.Mode
	// FromScratch retrains promoted trials from step 0 (SimConfig).
	FromScratch bool
}

// CompareRow is one scenario under every mode.
type CompareRow struct {
	Scenario  string
	Algorithm string
	GPUs      int
	Results   []SimResult // by CompareConfig.Modes
}

// Compare runs the grid.
func Compare(ws []*Workload, cfg CompareConfig) ([]CompareRow, error) {
	if len(cfg.Modes) == 0 {
		cfg.Modes = []fluid.Mode{fluid.WholeGPU, fluid.FixedFraction, fluid.WaterFill}
	}
	scen := map[string][]*Workload{}
	var names []string
	for _, w := range ws {
		scen[w.Model] = []*Workload{w}
		names = append(names, w.Model)
	}
	if len(ws) > 1 {
		all := fmt.Sprintf("all %d together", len(ws))
		scen[all] = ws
		names = append(names, all)
	}
	var rows []CompareRow
	for _, alg := range cfg.Algorithms {
		eta := cfg.Reduction[alg]
		if eta == 0 {
			eta = map[string]float64{AlgASHA: 2}[alg]
		}
		for _, name := range names {
			for _, g := range cfg.GPUs {
				row := CompareRow{Scenario: name, Algorithm: alg, GPUs: g}
				for _, m := range cfg.Modes {
					r, err := Simulate(scen[name], SimConfig{GPUs: g, Algorithm: alg, Mode: m, Reduction: eta, FromScratch: cfg.FromScratch})
					if err != nil {
						return nil, fmt.Errorf("%s %s %d GPUs %s: %w", name, alg, g, m, err)
					}
					row.Results = append(row.Results, r)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// WriteMarkdown prints rows as a table: makespan and GPU-hours per mode,
// the speed-up of the last mode over the first, and whether both found
// the same best configuration of every tuning job.
func WriteMarkdown(w io.Writer, modes []fluid.Mode, rows []CompareRow) {
	hdr := []string{"scenario", "alg", "GPUs"}
	for _, m := range modes {
		hdr = append(hdr, m.String()+" makespan h", m.String()+" GPU-h")
	}
	last := modes[len(modes)-1].String()
	hdr = append(hdr, last+" speed-up", "same best")
	fmt.Fprintln(w, "| "+strings.Join(hdr, " | ")+" |")
	fmt.Fprintln(w, strings.Repeat("|---", len(hdr))+"|")
	geo := map[string][]float64{}
	for _, r := range rows {
		cells := []string{r.Scenario, r.Algorithm, fmt.Sprint(r.GPUs)}
		for _, res := range r.Results {
			cells = append(cells, fmt.Sprintf("%.2f", res.Makespan/3600), fmt.Sprintf("%.1f", res.GPUHours))
		}
		first, end := r.Results[0], r.Results[len(r.Results)-1]
		up := first.Makespan / end.Makespan
		geo[r.Algorithm] = append(geo[r.Algorithm], up)
		cells = append(cells, fmt.Sprintf("**%.2f×**", up), sameBest(first, end))
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
	for _, alg := range []string{AlgSHA, AlgASHA, AlgHyperband, AlgBOHB, AlgRandom} {
		if v := geo[alg]; len(v) > 0 {
			fmt.Fprintf(w, "\n%s: geometric-mean speed-up of %s over %s %.2f× over %d rows\n", alg, last, modes[0], geomean(v), len(v))
		}
	}
	writeByGPUs(w, last, modes[0].String(), rows)
}

// writeByGPUs prints the geometric-mean speed-up per algorithm and cluster
// size, and in how many rows both modes found the same best configuration.
func writeByGPUs(w io.Writer, last, first string, rows []CompareRow) {
	var sizes []int
	seen := map[int]bool{}
	up := map[string]map[int][]float64{}
	same, total := map[string]int{}, map[string]int{}
	for _, r := range rows {
		if !seen[r.GPUs] {
			seen[r.GPUs] = true
			sizes = append(sizes, r.GPUs)
		}
		if up[r.Algorithm] == nil {
			up[r.Algorithm] = map[int][]float64{}
		}
		a, b := r.Results[0], r.Results[len(r.Results)-1]
		up[r.Algorithm][r.GPUs] = append(up[r.Algorithm][r.GPUs], a.Makespan/b.Makespan)
		total[r.Algorithm]++
		if sameBest(a, b) == "yes" {
			same[r.Algorithm]++
		}
	}
	sort.Ints(sizes)
	fmt.Fprintf(w, "\ngeometric-mean speed-up of %s over %s by cluster size:\n\n| alg |", last, first)
	for _, g := range sizes {
		fmt.Fprintf(w, " %d GPUs |", g)
	}
	fmt.Fprintln(w, " same best |")
	fmt.Fprintln(w, strings.Repeat("|---", len(sizes)+2)+"|")
	for _, alg := range []string{AlgSHA, AlgASHA, AlgHyperband, AlgBOHB, AlgRandom} {
		if total[alg] == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s |", alg)
		for _, g := range sizes {
			fmt.Fprintf(w, " %.2f× |", geomean(up[alg][g]))
		}
		fmt.Fprintf(w, " %d of %d |\n", same[alg], total[alg])
	}
}

func sameBest(a, b SimResult) string {
	var diff []string
	for k, x := range a.Best {
		if y := b.Best[k]; y.Batch != x.Batch {
			diff = append(diff, fmt.Sprintf("%s: %d (%.4g) vs %d (%.4g)", k, x.Batch, x.Metric, y.Batch, y.Metric))
		}
	}
	if len(diff) == 0 {
		return "yes"
	}
	sort.Strings(diff)
	return "no: " + strings.Join(diff, "; ")
}

func geomean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(v)))
}

// WriteResumeSavings compares the same grid run with checkpoint resume
// (resumed) and with from-scratch promotion (scratch), per algorithm and
// mode: summed makespan and GPU-hours over the rows, what resume saves,
// and each mode's geometric-mean speed-up over the first mode both ways.
func WriteResumeSavings(w io.Writer, modes []fluid.Mode, resumed, scratch []CompareRow) {
	fmt.Fprintln(w, "| alg | mode | makespan h (scratch → resume) | saved | GPU-h (scratch → resume) | saved | speed-up vs "+modes[0].String()+" (scratch / resume) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, alg := range []string{AlgSHA, AlgASHA, AlgHyperband, AlgBOHB, AlgRandom} {
		for mi, m := range modes {
			var ms, mr, gs, gr float64
			var us, ur []float64
			n := 0
			for i := range resumed {
				if resumed[i].Algorithm != alg || i >= len(scratch) {
					continue
				}
				r, s := resumed[i].Results, scratch[i].Results
				ms, mr = ms+s[mi].Makespan/3600, mr+r[mi].Makespan/3600
				gs, gr = gs+s[mi].GPUHours, gr+r[mi].GPUHours
				us, ur = append(us, s[0].Makespan/s[mi].Makespan), append(ur, r[0].Makespan/r[mi].Makespan)
				n++
			}
			if n == 0 {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %.1f → %.1f | %.0f %% | %.1f → %.1f | %.0f %% | %.2f× / %.2f× |\n", alg, m,
				ms, mr, 100*(1-mr/ms), gs, gr, 100*(1-gr/gs), geomean(us), geomean(ur))
		}
	}
}
