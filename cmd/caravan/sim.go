package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/caravan-dl/caravan/scheduler/sim"
)

var simCommands = map[string]command{
	"run":      {"replay a trace under one policy", simRun},
	"compare":  {"replay a trace under several policies and print one table", simCompare},
	"bench":    {"run the standard benchmark suite over ../shared/traces", simBench},
	"policies": {"list policy names", simPolicies},
}

func runSim(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || simCommands[args[0]].run == nil {
		fmt.Fprintln(stderr, "usage: caravan sim <run|compare|bench|policies> [flags]  (-h for flags)")
		names := make([]string, 0, len(simCommands))
		for n := range simCommands {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stderr, "  %-10s %s\n", n, simCommands[n].summary)
		}
		if len(args) == 0 {
			return fmt.Errorf("sim: no subcommand")
		}
		return fmt.Errorf("sim: unknown subcommand %q", args[0])
	}
	return simCommands[args[0]].run(args[1:], stdout, stderr)
}

func simRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan sim run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addScenarioFlags(fs)
	pol := fs.String("policy", "fifo", "policy name (see `caravan sim policies`)")
	cpuprof := fs.String("cpuprofile", "", "write a Go CPU profile of the replay to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sc, pf, err := sf.load(stderr, []string{*pol})
	if err != nil {
		return err
	}
	p, err := pf(*pol)
	if err != nil {
		return err
	}
	if !sf.quiet {
		sc.Config.Progress = stderr
	}
	stop, err := startProfile(*cpuprof)
	if err != nil {
		return err
	}
	r, err := sim.Run(sc.Config, sc.Cluster, sc.Jobs, p)
	stop()
	if err != nil {
		return err
	}
	r.Trace = sc.Name
	return sf.report(stdout, []*sim.Result{r})
}

func simCompare(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan sim compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addScenarioFlags(fs)
	pols := fs.String("policies", "fifo,srtf-oracle,tiresias-las,tiresias-gittins", "comma-separated policy names")
	par := fs.Int("parallel", runtime.GOMAXPROCS(0), "policies run at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	names := splitList(*pols)
	sc, pf, err := sf.load(stderr, names)
	if err != nil {
		return err
	}
	var bar io.Writer
	if !sf.quiet {
		bar = stderr
	}
	rs, err := sim.Compare(sc, names, pf, *par, bar)
	if err != nil {
		return err
	}
	return sf.report(stdout, rs)
}

func simPolicies(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan sim policies", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: caravan sim policies\n\nLists every policy name and how the simulator advances time for it.")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	mk := factory(registry.Config{})
	for _, n := range policyNames() {
		p, err := mk(n)
		if err != nil {
			continue // e.g. optimus+spread: Optimus places for itself
		}
		fmt.Fprintf(stdout, "%-40s %s\n", n, timeModel(p))
	}
	for _, n := range registry.ExtraOrderings() {
		fmt.Fprintf(stdout, "%-40s %s\n", n, "event driven, exact queue-threshold wake-ups; needs --gittins-prior")
	}
	fmt.Fprintln(stdout, "\nTiresias reference simulator names (run_sim.py --schedule; its fifo is fifo):")
	al := registry.Aliases()
	for _, n := range registry.AliasNames() {
		fmt.Fprintf(stdout, "%-40s = %s\n", n, al[n])
	}
	return nil
}

// report prints the table and writes files and plots when --out is set.
func (sf *scenarioFlags) report(stdout io.Writer, rs []*sim.Result) error {
	sim.WriteTable(stdout, rs)
	fmt.Fprintln(stdout)
	sim.WriteBucketTable(stdout, rs)
	if sf.workload == "gavel" {
		writeColocTable(stdout, rs)
	}
	for _, r := range rs {
		if len(r.Unfit) > 0 {
			fmt.Fprintf(stdout, "\n%s: %d jobs could not be placed, e.g. %s (%s)\n", r.Policy, len(r.Unfit), r.Unfit[0].ID, r.Unfit[0].Reason)
		}
	}
	if sf.out == "" {
		return nil
	}
	if err := os.MkdirAll(sf.out, 0o755); err != nil {
		return err
	}
	for _, r := range rs {
		if err := r.WriteFiles(sf.out, safeName(r.Policy)+"-"); err != nil {
			return err
		}
	}
	if sf.plots != "none" {
		if err := sim.Plot(sf.out, "", sf.plots, rs); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\nwrote results to %s\n", filepath.Clean(sf.out))
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func safeName(s string) string {
	return strings.NewReplacer("+", "_", "/", "_", " ", "_").Replace(s)
}

// startProfile starts a CPU profile into path ("" = none); the returned
// function stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
