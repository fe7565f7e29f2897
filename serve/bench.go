package serve

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"
)

// BenchConfig is a simulated comparison of the policies on a trace.
type BenchConfig struct {
	Trace    []TraceReq
	Profile  []ProfilePoint
	Features bool // dynamic model: requests carry lengths
	// InDiv, OutDiv scale the trace's token counts to the model (input
	// tokens / InDiv, capped at MaxIn; likewise output).
	InDiv, OutDiv int
	MaxIn, MaxOut int
	Requests      int       // trace prefix replayed (after Skip)
	Skip          int       // trace requests skipped first
	Speedups      []float64 // arrival-rate multipliers
	SLOs          []time.Duration
	Workers       int
	MaxBatch      int
	Policies      []string
	Overhead      time.Duration
	Seed          uint64
	// NoNoise uses the measured medians alone (as on a dedicated core),
	// without the spread measured on the shared machine.
	NoNoise bool
}

// BenchRow is one (SLO, speedup, policy) result.
type BenchRow struct {
	SLO     time.Duration
	Speedup float64
	SimResult
}

// RunBench runs every combination.
func RunBench(c BenchConfig) ([]BenchRow, error) {
	exec, err := NewExecModel(c.Profile)
	if err != nil {
		return nil, err
	}
	if c.NoNoise {
		exec.noise = []float64{1}
	}
	if c.Skip+c.Requests > len(c.Trace) {
		return nil, fmt.Errorf("bench: trace has %d requests, asked for %d after %d", len(c.Trace), c.Requests, c.Skip)
	}
	tr := c.Trace[c.Skip : c.Skip+c.Requests]
	var rows []BenchRow
	for _, slo := range c.SLOs {
		for _, sp := range c.Speedups {
			reqs := scaleTrace(tr, c, sp, slo)
			warm := warmup(exec, reqs, c)
			for _, pn := range c.Policies {
				pol, err := NewPolicy(pn, PolicyConfig{MaxBatch: c.MaxBatch})
				if err != nil {
					return nil, err
				}
				r := Simulate(SimConfig{Policy: pol, Workers: c.Workers, Exec: exec, Features: c.Features, Requests: reqs,
					Warm: warm, Warmup: len(reqs) / 10, Overhead: c.Overhead, Seed: c.Seed})
				rows = append(rows, BenchRow{SLO: slo, Speedup: sp, SimResult: r})
			}
		}
	}
	return rows, nil
}

func scaleTrace(tr []TraceReq, c BenchConfig, speedup float64, slo time.Duration) []SimRequest {
	out := make([]SimRequest, len(tr))
	t0 := tr[0].At
	for i, r := range tr {
		sr := SimRequest{At: time.Duration(float64(r.At-t0) / speedup), SLO: slo}
		if c.Features {
			sr.In = min(ceilDiv(r.In, max(c.InDiv, 1)), c.MaxIn)
			sr.Out = min(ceilDiv(r.Out, max(c.OutDiv, 1)), c.MaxOut)
		}
		out[i] = sr
	}
	return out
}

// warmup is what offline profiling with representative inputs gives every
// policy alike: the measured grid, then 64 batches of each size made of
// random requests of the replayed trace, latencies drawn from the model.
func warmup(exec *ExecModel, reqs []SimRequest, c BenchConfig) []ProfilePoint {
	rng := rand.New(rand.NewPCG(c.Seed, 99))
	pts := slices.Clone(c.Profile)
	for b := 1; b <= c.MaxBatch; b *= 2 {
		for range 64 {
			in, out := 0, 0
			for range b {
				r := reqs[rng.IntN(len(reqs))]
				in, out = max(in, r.In), max(out, r.Out)
			}
			pts = append(pts, ProfilePoint{Batch: b, In: in, Out: out, Latency: exec.Sample(rng, b, in, out)})
		}
	}
	return pts
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// WriteBenchTable prints rows as a Markdown table, with each policy's
// attainment relative to Clockwork's in the same (SLO, load) cell.
func WriteBenchTable(w io.Writer, rows []BenchRow) {
	fmt.Fprintln(w, "| SLO | load (req/s) | policy | attainment | vs clockwork | goodput (req/s) | p99 latency | dropped early | late | mean batch | decision mean / p99 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	cw := map[[2]float64]float64{}
	for _, r := range rows {
		if r.Policy == "clockwork" {
			cw[[2]float64{r.SLO.Seconds(), r.Speedup}] = float64(r.Met)
		}
	}
	for _, r := range rows {
		rel := "–"
		if base, ok := cw[[2]float64{r.SLO.Seconds(), r.Speedup}]; ok && base > 0 && r.Policy != "clockwork" {
			rel = fmt.Sprintf("%+.0f %%", 100*(float64(r.Met)/base-1))
		}
		dec := "–" // live runs: see caravan_serve_decision_seconds
		if r.DecisionMean > 0 {
			dec = fmt.Sprintf("%v / %v", r.DecisionMean.Round(time.Microsecond/10), r.DecisionP99.Round(time.Microsecond/10))
		}
		fmt.Fprintf(w, "| %v | %.0f | %s | %.1f %% | %s | %.1f | %v | %d | %d | %.1f | %s |\n",
			r.SLO, r.OfferedRate, r.Policy, 100*r.Attainment, rel, r.Goodput, r.P99.Round(time.Millisecond),
			r.Dropped, r.Late, r.MeanBatch, dec)
	}
}
