package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/caravan-dl/caravan/scheduler/sim"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// scenarioFlags are the flags run and compare share.
type scenarioFlags struct {
	spec        sim.Spec
	seed        uint64
	workload    string
	profiles    string
	prior       string
	backfill    bool
	queueLimits string
	promote     float64
	beta        float64
	out, plots  string
	quiet       bool
	gavel       gavelFlags
}

func addScenarioFlags(fs *flag.FlagSet) *scenarioFlags {
	f := &scenarioFlags{}
	s := &f.spec
	fs.StringVar(&s.Trace, "trace", "", "trace as kind:path, kind one of "+strings.Join(trace.Kinds, ", ")+" (required)")
	fs.StringVar(&s.VC, "vc", "", "philly: keep only this virtual cluster (e.g. 6214e9)")
	fs.BoolVar(&s.RoundUp, "round-up", false, "alibaba: give fractional pods whole GPUs (no sharing)")
	fs.IntVar(&s.GPUs, "gpus", 0, "homogeneous cluster with this many GPUs")
	fs.IntVar(&s.GPUsPerNode, "gpus-per-node", 8, "GPUs per node for --gpus")
	fs.IntVar(&s.NodesPerRack, "nodes-per-rack", 32, "nodes behind one switch for --gpus")
	fs.StringVar(&s.ClusterSpec, "cluster-spec", "", "Tiresias cluster spec CSV (e.g. tiresias/n32g4.csv), if no --gpus")
	fs.StringVar(&s.Nodes, "nodes", "", "Alibaba node list CSV, if no --gpus or --cluster-spec")
	fs.BoolVar(&s.SkipUnfit, "skip-unfit", false, "report jobs larger than the cluster instead of failing")
	fs.IntVar(&s.MaxJobs, "max-jobs", 0, "replay only the first N jobs (0 = all)")
	fs.BoolVar(&s.Batch, "batch", false, "submit every job at t=0 (makespan experiments)")
	fs.StringVar(&f.workload, "workload", "trace", "trace: durations as recorded, spread penalty from --spread-model; profiles: each job gets a seeded profiled model; gavel: single-GPU jobs get Gavel types (see --gavel*; policies <ordering>+colocate-<exclusive|naive|predicted|oracle|explore>)")
	fs.StringVar(&s.SpreadModel, "spread-model", "imagenet", "profiled model whose measured spread penalty plain trace jobs get")
	fs.StringVar(&f.profiles, "profiles", "auto", "model-profiles dir; auto = next to the trace's directory; none = placement-blind")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for model assignment")
	fs.BoolVar(&s.Elastic, "elastic", false, "let jobs run on 1..2× their GPUs (Optimus)")
	fs.Float64Var(&s.Config.Quantum, "quantum", 60, "seconds between re-plans for policies that poll (Optimus, Lucid, fair, batch windows); 2D-LAS/Gittins, FIFO and SRTF wake on exact events and ignore it (see caravan sim policies)")
	fs.Float64Var(&s.Config.RestartPenalty, "restart-penalty", 0, "seconds of work redone after each preemption")
	fs.Float64Var(&f.beta, "interference-beta", 0.05, "per-co-runner slowdown on a shared GPU")
	fs.BoolVar(&s.Config.Check, "check", false, "verify invariants after every event (slow)")
	fs.StringVar(&f.prior, "gittins-prior", "auto", "GPU-time samples for Gittins; auto = tiresias/yarn-gput1000.csv next to the trace's directory")
	fs.BoolVar(&f.backfill, "fifo-backfill", false, "FIFO may start smaller jobs past a blocked head")
	fs.StringVar(&f.queueLimits, registry.QueueLimitsFlag, "", "Tiresias queue limits in GPU-seconds, e.g. 3250,7200,18000 (default: the paper's)")
	fs.Float64Var(&f.promote, "promote-knob", 0, "Tiresias starvation knob (0 = off)")
	fs.StringVar(&f.out, "out", "", "directory for JSON/CSV results and plots")
	fs.StringVar(&f.plots, "plots", "svg", "plot format: svg, png or none")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	addGavelFlags(fs, &f.gavel)
	return f
}

// load validates flags and loads the scenario and a policy factory.
func (f *scenarioFlags) load(stderr io.Writer, policies []string) (sim.Scenario, sim.Factory, error) {
	s := f.spec
	if s.Trace == "" {
		return sim.Scenario{}, nil, fmt.Errorf("--trace is required (e.g. tiresias:../shared/traces/tiresias/60_job.csv)")
	}
	switch f.workload {
	case "trace", "gavel":
	case "profiles":
		s.AssignModels = true
	default:
		return sim.Scenario{}, nil, fmt.Errorf("--workload %q: want trace, profiles or gavel", f.workload)
	}
	if f.plots != "svg" && f.plots != "png" && f.plots != "none" {
		return sim.Scenario{}, nil, fmt.Errorf("--plots %q: want svg, png or none", f.plots)
	}
	s.Seed = f.seed
	s.Config.Interference.Beta = f.beta
	s.Profiles = autoPath(f.profiles, s.Trace, "model-profiles")
	sc, st, err := s.Load()
	if err != nil {
		return sim.Scenario{}, nil, err
	}
	gpus := sim.TotalGPUs(sc.Cluster)
	fmt.Fprintf(stderr, "%s: %d jobs, %.0f GPU-hours over %.1f days on %d GPUs: offered load %.2f\n",
		sc.Name, st.Jobs, st.GPUSeconds/3600, st.Span/86400, gpus, st.OfferedLoad(gpus))
	pc, err := f.policyConfig(s.Trace, policies)
	if err != nil {
		return sim.Scenario{}, nil, err
	}
	if f.workload == "gavel" {
		return f.gavelScenario(stderr, sc, pc, policies)
	}
	return sc, factory(pc), nil
}

// autoPath resolves "auto" to <trace dir>/../<name> when it exists.
func autoPath(v, traceSpec, name string) string {
	switch v {
	case "none":
		return ""
	case "auto":
		_, path, _ := strings.Cut(traceSpec, ":")
		p := filepath.Join(filepath.Dir(filepath.Dir(path)), name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	return v
}
