package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/policy/colocate"
	"github.com/caravan-dl/caravan/scheduler/profile"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// colocateCommands are `caravan colocate eval|bench`: the Horus
// interference predictor judged on Gavel's measured pairs, and co-location
// rules compared on a workload of Gavel job types.
var colocateCommands = map[string]command{
	"eval":  {"leave-one-model-out error of the Horus slowdown predictor vs the β model", colocateEval},
	"bench": {"exclusive vs predicted vs oracle vs naive co-location on a Gavel-type workload", colocateBench},
}

var runColocate = nested("colocate", colocateCommands)

// nested runs a command made of subcommands: the first argument names one.
func nested(name string, table map[string]command) func([]string, io.Writer, io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		if len(args) > 0 && table[args[0]].run != nil {
			return table[args[0]].run(args[1:], stdout, stderr)
		}
		fmt.Fprintf(stderr, "usage: caravan %s <subcommand> [flags]  (-h for flags)\n", name)
		names := make([]string, 0, len(table))
		for n := range table {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stderr, "  %-10s %s\n", n, table[n].summary)
		}
		if len(args) == 0 {
			return fmt.Errorf("%s: no subcommand", name)
		}
		if args[0] == "-h" || args[0] == "--help" {
			return flag.ErrHelp
		}
		return fmt.Errorf("%s: unknown subcommand %q", name, args[0])
	}
}

type colocateFlags struct {
	traces string
	gpus   []string
	bound  float64
}

func (c *colocateFlags) register(fs *flag.FlagSet) {
	def, _ := repo.Traces()
	fs.StringVar(&c.traces, "traces", def, "folder holding gavel-throughputs/ and philly/")
	fs.Func("gpu", "GPU types, comma-separated (default v100,p100,k80)", func(s string) error {
		c.gpus = strings.Split(s, ",")
		return nil
	})
	fs.Float64Var(&c.bound, "bound", colocate.DefaultBound, "largest slowdown a co-location may cause either job")
}

func (c *colocateFlags) load() (*profile.Gavel, map[string]profile.ModelGraph, error) {
	if len(c.gpus) == 0 {
		c.gpus = []string{"v100", "p100", "k80"}
	}
	if !(c.bound >= 1) {
		return nil, nil, fmt.Errorf("colocate: -bound %v must be ≥ 1", c.bound)
	}
	g, err := profile.LoadGavel(filepath.Join(c.traces, "gavel-throughputs", "simulation_throughputs.json"))
	if err != nil {
		return nil, nil, err
	}
	graphs, err := profile.GavelGraphs()
	return g, graphs, err
}

func colocateEval(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("colocate eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c colocateFlags
	c.register(fs)
	perModel := fs.Bool("per-model", false, "also print the graph-feature predictor's error on each held-out model")
	pool := fs.Bool("pool", false, "also print a fit pooled over v100, p100 and k80 (GPU type as a feature): held out on every type, and, not held out, with the model's pairs on the other types seen")
	if err := fs.Parse(args); err != nil {
		return err
	}
	g, graphs, err := c.load()
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "gpu\tpredictor\tpairs\tmedian |err|\tmean |err|\twithin 10%%\taccepted ≤ %.2f but over\n", c.bound)
	var pooled map[string]colocate.PooledErrors
	if *pool {
		pooled = map[string]colocate.PooledErrors{}
		for _, e := range colocate.EvaluatePooled(colocate.PooledSamples(g, poolGPUs, graphs), c.gpus, c.bound) {
			pooled[e.GPU] = e
		}
	}
	for _, gpu := range c.gpus {
		s, _ := colocate.GavelSamples(g, gpu, graphs)
		ev := colocate.EvaluateLOMO(s, c.bound, colocate.DefaultBeta())
		if e, ok := pooled[gpu]; ok {
			for _, r := range []struct {
				name string
				e    colocate.Errors
			}{{"horus pooled over GPU types, held out", e.HeldOut}, {"horus pooled, model seen on other GPUs (NOT held out)", e.SeenElsewhere}} {
				fmt.Fprintf(w, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%.0f%%\t%.0f%%\n", gpu, r.name, r.e.Pairs,
					100*r.e.MedianRel, 100*r.e.MeanRel, 100*r.e.Within10, 100*r.e.FalseAccept)
			}
		}
		for _, r := range []struct {
			name string
			e    colocate.Errors
		}{{"horus (graph features)", ev.Horus}, {"horus + partner profiles", ev.Profiled},
			{"β model (today's)", ev.Beta}, {"training median", ev.Median}} {
			fmt.Fprintf(w, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%.0f%%\t%.0f%%\n", gpu, r.name, r.e.Pairs,
				100*r.e.MedianRel, 100*r.e.MeanRel, 100*r.e.Within10, 100*r.e.FalseAccept)
		}
		for _, m := range ev.Models {
			if *perModel {
				fmt.Fprintf(w, "%s\t  held out: %s\t%d\t%.1f%%\t%.1f%%\t%.0f%%\t%.0f%%\n", gpu, m.Model, m.Pairs,
					100*m.MedianRel, 100*m.MeanRel, 100*m.Within10, 100*m.FalseAccept)
			}
		}
	}
	return w.Flush()
}

func colocateBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("colocate bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c colocateFlags
	c.register(fs)
	n := fs.Int("jobs", 400, "jobs in the workload")
	gpus := fs.Int("gpus", 16, "GPUs in the cluster")
	loads := fs.String("loads", "batch,0.8,1.2", "offered loads; batch submits every job at t=0 (makespan)")
	seeds := fs.Int("seeds", 5, "workloads per cell (seeds 1..N), averaged")
	maxDur := fs.Duration("max-duration", 8*time.Hour, "cap on Philly's run times, so one multi-week job does not set the makespan whatever the packing")
	var o benchOptions
	fs.StringVar(&o.heldOut, "held-out", "pair", "what the predicted rule never saw: pair (neither model of the pair), model (the job's own model: a new model among known ones) or type (neither job type: known models at new batch sizes)")
	fs.StringVar(&o.pool, "pool", "", "fit the predicted rule on all three GPU types' pairs, the type as a feature: held-out (neither model on any type) or seen-elsewhere (a different case, NOT held out: the models' pairs on the other types are seen); only with -held-out pair")
	fs.BoolVar(&o.opt.Partners, "partners", false, "predictor learns known partner models' profiles (FitOptions.Partners)")
	fs.BoolVar(&o.best, "best-partner", false, "join the allowed GPU whose pair the rule judges fastest, not the first")
	dropUnslowed := fs.Bool("drop-unslowed", false, "treat pairs that record a side at exactly its speed alone (V100's suspect records, profile.Gavel.Unslowed) as never run together, for every rule and the predictor's training")
	fs.BoolVar(&o.learn, "learn", false, "also run predicted+learn: pairs of types the run already co-located are judged by what they measured then (Experiment.Learn)")
	fs.Float64Var(&o.target, "margin-target", 0.1, "also run predicted+margin: accept a pair only under a threshold each held-out fit learns by leave-one-model-out on its own training models, keeping at most this share of accepted jobs over the bound there (0: skip)")
	ex := colocate.DefaultExplore()
	fs.BoolVar(&o.explore, "explore", false, "also run predicted+explore: unjudged type pairs share on trial for a probe window, then their measured slowdowns decide (Experiment.Explore)")
	fs.Float64Var(&ex.Window, "explore-window", ex.Window, "seconds a probe runs before its measurement decides")
	fs.Float64Var(&ex.Restart, "explore-restart", ex.Restart, "seconds of work an evicted newcomer repeats on restart, beyond its lost probe progress")
	fs.Float64Var(&ex.Factor, "explore-factor", ex.Factor, "probe a pair whose optimistic estimate is at most bound × this")
	fs.IntVar(&ex.MaxInFlight, "explore-inflight", 0, "probes at once (0: a quarter of -gpus, at least 1)")
	fs.BoolVar(&ex.NoModelPrior, "explore-no-prior", false, "ablation: estimate every unjudged pair by the predictor, ignoring what the same models measured at other batch sizes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := exploreFlags(ex); err != nil {
		return err
	}
	o.ex = ex
	if !(o.target >= 0 && o.target < 1) {
		return fmt.Errorf("colocate bench: -margin-target %v: want a share in [0, 1)", o.target)
	}
	if o.heldOut != "pair" && o.heldOut != "model" && o.heldOut != "type" {
		return fmt.Errorf("colocate bench: -held-out %q: want pair, model or type", o.heldOut)
	}
	if o.pool != "" && o.pool != "held-out" && o.pool != "seen-elsewhere" {
		return fmt.Errorf("colocate bench: -pool %q: want held-out or seen-elsewhere", o.pool)
	}
	if o.pool != "" && o.heldOut != "pair" {
		return fmt.Errorf("colocate bench: -pool %s works with -held-out pair only, not %s", o.pool, o.heldOut)
	}
	g, graphs, err := c.load()
	if err != nil {
		return err
	}
	if *dropUnslowed {
		for _, gpu := range c.gpus {
			g = g.WithoutUnslowed(gpu)
		}
	}
	if o.pool != "" {
		o.pooled = colocate.PooledSamples(g, poolGPUs, graphs)
	}
	durations, err := phillySingleGPU(filepath.Join(c.traces, "philly", "philly_jobs.csv"), maxDur.Seconds())
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "gpu\tload\trule\tmakespan\tavg JCT\tavg wait\tco-locations\tover bound\tsustained over\tsustained over s\tprobes / over\tover-probe s\tworst slowdown")
	for _, gpu := range c.gpus {
		for _, l := range strings.Split(*loads, ",") {
			if err := benchCell(w, g, graphs, durations, gpu, l, *n, *gpus, *seeds, c.bound, o); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}

// benchOptions choose the predicted rule's predictor and the packing.
type benchOptions struct {
	heldOut string
	opt     colocate.FitOptions
	best    bool
	target  float64 // predicted+margin's Margin.Target; 0 skips that row
	learn   bool    // add the predicted+learn row (Experiment.Learn)
	explore bool    // add the predicted+explore row (Experiment.Explore)
	ex      colocate.Explore
	pool    string // "", held-out or seen-elsewhere: fit on every GPU type's pairs
	pooled  []colocate.Sample
}

// poolGPUs are the GPU types a pooled fit learns from.
var poolGPUs = []string{"v100", "p100", "k80"}

// exploreFlags names the bench flag a bad Explore setting came from.
func exploreFlags(e colocate.Explore) error {
	switch {
	case !(e.Window > 0):
		return fmt.Errorf("colocate bench: -explore-window %v: want > 0 seconds", e.Window)
	case !(e.Restart >= 0):
		return fmt.Errorf("colocate bench: -explore-restart %v: want ≥ 0 seconds", e.Restart)
	case !(e.Factor >= 1):
		return fmt.Errorf("colocate bench: -explore-factor %v: want ≥ 1", e.Factor)
	case e.MaxInFlight < 0:
		return fmt.Errorf("colocate bench: -explore-inflight %d: want ≥ 0", e.MaxInFlight)
	}
	return nil
}

func (o benchOptions) predictor(samples []colocate.Sample, gpu string) (colocate.Slowdowner, error) {
	switch o.pool {
	case "held-out":
		return colocate.NewHeldOutPooled(o.pooled, o.opt)
	case "seen-elsewhere":
		return colocate.NewSeenElsewhere(o.pooled, gpu, o.opt)
	}
	switch o.heldOut {
	case "model":
		return colocate.NewLeaveOneOut(samples, o.opt)
	case "type":
		return colocate.NewHeldOutTypes(samples, o.opt)
	}
	return colocate.NewHeldOutWith(samples, o.opt)
}

func benchCell(w io.Writer, g *profile.Gavel, graphs map[string]profile.ModelGraph, durations []float64, gpu, load string, n, gpus, seeds int, bound float64, o benchOptions) error {
	batch := load == "batch"
	rho := 1.0
	if !batch {
		var err error
		if rho, err = strconv.ParseFloat(load, 64); err != nil || !(rho > 0) {
			return fmt.Errorf("colocate: -loads: %q is not a positive number or batch", load)
		}
	}
	samples, _ := colocate.GavelSamples(g, gpu, graphs)
	pred, err := o.predictor(samples, gpu)
	if err != nil {
		return err
	}
	x := colocate.Experiment{Gavel: g, GPU: gpu, GPUs: gpus, Bound: bound, Predictor: pred, BestPartner: o.best}
	rows := []benchRow{{"exclusive", colocate.Exclusive, x}, {"predicted", colocate.Predicted, x}}
	if o.target > 0 {
		om := o
		om.opt.Margin = colocate.Margin{Bound: bound, Target: o.target}
		if x.Predictor, err = om.predictor(samples, gpu); err != nil {
			return err
		}
		rows = append(rows, benchRow{"predicted+margin", colocate.Predicted, x})
		x.Predictor = pred
	}
	if o.learn {
		xl := x
		xl.Learn = true
		rows = append(rows, benchRow{"predicted+learn", colocate.Predicted, xl})
	}
	if o.explore {
		xe, ex := x, o.ex
		xe.Explore = &ex
		rows = append(rows, benchRow{"predicted+explore", colocate.Predicted, xe})
	}
	rows = append(rows, benchRow{"oracle", colocate.Oracle, x}, benchRow{"naive", colocate.Naive, x})
	for _, r := range rows {
		rule, x := r.rule, r.x
		var m meanOutcome
		for seed := 1; seed <= seeds; seed++ {
			jobs, err := colocate.Workload(g, gpu, graphs, durations, n, gpus, rho, int64(seed))
			if err != nil {
				return err
			}
			if batch {
				for i := range jobs {
					jobs[i].Submit = 0
				}
			}
			o, err := x.Run(jobs, rule)
			if err != nil {
				return err
			}
			m.add(o, float64(seeds))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.0f\t%.1f / %.1f\t%.0f\t%.2f\n", gpu, load, r.name,
			m.makespan, m.jct, m.wait, m.colocations, m.overBound, m.sustainedOver, m.sustainedOverS,
			m.probes, m.probesOver, m.probeOverS, m.worst)
	}
	return nil
}

// benchRow is one rule of a bench cell, with the experiment it runs in.
type benchRow struct {
	name string
	rule colocate.Rule
	x    colocate.Experiment
}

// meanOutcome averages outcomes over seeds; worst is the worst of all.
type meanOutcome struct {
	makespan, jct, wait, colocations, overBound, worst            float64
	sustainedOver, sustainedOverS, probes, probesOver, probeOverS float64
}

func (m *meanOutcome) add(o colocate.Outcome, n float64) {
	m.makespan += o.Makespan / n
	m.jct += o.AvgJCT / n
	m.wait += o.AvgWait / n
	m.colocations += float64(o.Colocations) / n
	m.overBound += float64(o.OverBound) / n
	m.sustainedOver += float64(o.SustainedOver()) / n
	m.sustainedOverS += o.SustainedOverSeconds / n
	m.probes += float64(o.Probes) / n
	m.probesOver += float64(o.ProbesOver) / n
	m.probeOverS += o.ProbeOverSeconds / n
	m.worst = max(m.worst, o.WorstSlowdown)
}

// phillySingleGPU are the run times of Philly's single-GPU jobs, capped.
func phillySingleGPU(path string, capSeconds float64) ([]float64, error) {
	tr, err := trace.LoadPhilly(path, trace.PhillyOptions{})
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, j := range tr.Jobs {
		if j.GPUs == 1 && j.Duration > 0 {
			out = append(out, min(float64(j.Duration), capSeconds))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no single-GPU jobs", path)
	}
	return out, nil
}
