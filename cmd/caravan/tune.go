package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy/fluid"
	"github.com/caravan-dl/caravan/tune"
)

var tuneCommands = map[string]command{
	"run":    {"run a tuning spec (HCL) on Nomad: dispatch trials, promote/stop them, print the best configuration", tuneRun},
	"status": {"show tuning jobs saved in Nomad Variables", tuneStatus},
	"sim":    {"simulate tuning workloads from measured model profiles: Fluid vs one trial per GPU", tuneSim},
}

func runTune(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || tuneCommands[args[0]].run == nil {
		fmt.Fprintln(stderr, "usage: caravan tune <run|status|sim> [flags]  (-h for flags)")
		names := make([]string, 0, len(tuneCommands))
		for n := range tuneCommands {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stderr, "  %-8s %s\n", n, tuneCommands[n].summary)
		}
		if len(args) == 0 {
			return errors.New("tune: no subcommand")
		}
		if args[0] == "-h" || args[0] == "--help" {
			return nil
		}
		return fmt.Errorf("tune: unknown subcommand %q", args[0])
	}
	return tuneCommands[args[0]].run(args[1:], stdout, stderr)
}

func tuneSim(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan tune sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("profiles", "../shared/traces/model-profiles", "model-profiles directory (validation-*.csv and placements.csv per model)")
	gpus := fs.String("gpus", "2,4,8,16", "cluster sizes, comma-separated")
	algs := fs.String("algorithms", "sha,asha,bohb", "tuning algorithms: sha, asha, hyperband, bohb, random")
	models := fs.String("models", "", "only these models, comma-separated (default: every profiled model)")
	resume := fs.String("resume", "on", "promoted trials resume their checkpoint (on), retrain from scratch (off), or both, with what resume saves (compare)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sizes, err := tuneSizes(*gpus)
	if err != nil {
		return fmt.Errorf("-gpus: %w", err)
	}
	ws, err := tune.LoadWorkloads(*dir, 4)
	if err != nil {
		return err
	}
	if *models != "" {
		ws = pick(ws, strings.Split(*models, ","))
		if len(ws) == 0 {
			return fmt.Errorf("-models: none of %q is profiled in %s", *models, *dir)
		}
	}
	if *resume != "on" && *resume != "off" && *resume != "compare" {
		return fmt.Errorf("-resume: %q is not on, off or compare", *resume)
	}
	modes := []fluid.Mode{fluid.WholeGPU, fluid.FixedFraction, fluid.WaterFill}
	cc := tune.CompareConfig{GPUs: sizes, Algorithms: strings.Split(*algs, ","), Modes: modes, FromScratch: *resume == "off"}
	rows, err := tune.Compare(ws, cc)
	if err != nil {
		return err
	}
	tune.WriteMarkdown(stdout, modes, rows)
	if *resume != "compare" {
		return nil
	}
	cc.FromScratch = true
	scratch, err := tune.Compare(ws, cc)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nfrom-scratch promotion (every mode):")
	tune.WriteMarkdown(stdout, modes, scratch)
	fmt.Fprintln(stdout, "\nwhat checkpoint resume saves, summed over the rows:")
	tune.WriteResumeSavings(stdout, modes, rows, scratch)
	return nil
}

func tuneSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func pick(ws []*tune.Workload, names []string) []*tune.Workload {
	var out []*tune.Workload
	for _, w := range ws {
		for _, n := range names {
			if strings.TrimSpace(n) == w.Model {
				out = append(out, w)
			}
		}
	}
	return out
}
