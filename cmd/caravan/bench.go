package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"

	"github.com/caravan-dl/caravan/scheduler/sim"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

func simBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan sim bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	traces := fs.String("traces", "../shared/traces", "directory holding philly/, tiresias/, alibaba-gpu-v2023/, model-profiles/")
	out := fs.String("out", "out/bench", "directory for the markdown report, CSV/JSON and plots")
	plots := fs.String("plots", "svg", "plot format: svg, png or none")
	only := fs.String("only", "", "comma-separated scenario names to run (default all)")
	par := fs.Int("parallel", runtime.GOMAXPROCS(0), "policies run at once")
	quiet := fs.Bool("quiet", false, "no progress bars")
	if err := fs.Parse(args); err != nil {
		return err
	}
	prior, err := trace.LoadGittinsSamples(filepath.Join(*traces, "tiresias", "yarn-gput1000.csv"))
	if err != nil {
		return err
	}
	f := &scenarioFlags{}
	pc, err := f.policyConfig("", nil)
	if err != nil {
		return err
	}
	pc.GittinsPrior = prior
	var bar io.Writer
	if !*quiet {
		bar = stderr
	}
	b := sim.Bench{Traces: *traces, Out: *out, Plots: *plots, Parallel: *par, Progress: bar, Policies: factory(pc), Only: splitList(*only), Log: stderr}
	if err := b.Run(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", filepath.Join(*out, "README.md"))
	return nil
}
