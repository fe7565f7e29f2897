package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/caravan-dl/caravan/scheduler/live"
	"github.com/caravan-dl/caravan/scheduler/policy/colocate"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

// runScheduler is `caravan scheduler`: it connects to Nomad (NOMAD_ADDR,
// NOMAD_TOKEN and the other NOMAD_* variables), serves the HTTP API and
// schedules until SIGINT or SIGTERM.
func runScheduler(args []string, stdout, stderr io.Writer) error {
	cfg, level, err := parseSchedulerFlags(args, stderr)
	if err != nil {
		return err
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "caravan-scheduler", Level: hclog.LevelFromString(level), Output: stderr})
	client, err := live.NewNomadClient(api.DefaultConfig())
	if err != nil {
		return fmt.Errorf("nomad client: %w", err)
	}
	s, err := live.New(cfg, client, log)
	if err != nil {
		return err
	}
	stopGossip, err := startSchedulerGossip(s, log)
	if err != nil {
		return err
	}
	defer stopGossip()
	ctx, stop := signalContext()
	defer stop()
	if err := s.Serve(ctx); err != nil {
		return err
	}
	log.Info("stopped cleanly")
	return nil
}

// signalContext ends on SIGINT or SIGTERM, with the signal as its cause,
// so the shutdown log line says which.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			cancel(fmt.Errorf("received %s", sig))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

func parseSchedulerFlags(args []string, out io.Writer) (live.Config, string, error) {
	cfg := live.DefaultConfig()
	fs := flag.NewFlagSet("caravan scheduler", flag.ContinueOnError)
	setUsage(fs, out, "caravan scheduler [flags]\n\nRuns the live scheduler against the Nomad cluster at $NOMAD_ADDR (token $NOMAD_TOKEN).")
	fs.StringVar(&cfg.Policy, "policy", cfg.Policy, "scheduling policy, e.g. fifo, tiresias-las, tiresias-gittins+consolidated")
	fs.DurationVar(&cfg.Quantum, "quantum", cfg.Quantum, "re-decide at least this often")
	fs.DurationVar(&cfg.Debounce, "debounce", cfg.Debounce, "wait this long after an event for the rest of its burst")
	fs.DurationVar(&cfg.ReconcileEvery, "reconcile-every", cfg.ReconcileEvery,
		"re-read every job, allocation and node this often, beside following Nomad's event stream")
	limits := fs.String(registry.QueueLimitsFlag, "", "Tiresias queue limits in GPU-seconds, e.g. 3250,7200,18000 (default: the paper's)")
	fs.StringVar(&cfg.Namespace, "namespace", cfg.Namespace, "Nomad namespace of the jobs")
	fs.StringVar(&cfg.QueuePool, "queue-pool", cfg.QueuePool, "node pool users submit into")
	fs.StringVar(&cfg.Pool, "pool", cfg.Pool, "node pool to admit into when a job's meta has no caravan.pool")
	fs.StringVar(&cfg.StatePath, "state-path", cfg.StatePath, "Nomad Variable holding the scheduler's state")
	fs.StringVar(&cfg.LockPath, "lock-path", cfg.LockPath, "Nomad Variable used as the leader lock")
	fs.DurationVar(&cfg.LockTTL, "lock-ttl", cfg.LockTTL, "leader lock TTL (at least 10s)")
	fs.DurationVar(&cfg.LockDelay, "lock-delay", cfg.LockDelay, "wait after a lost lock before another instance may lead")
	fs.DurationVar(&cfg.PlaceTimeout, "place-timeout", cfg.PlaceTimeout, "requeue an admitted job Nomad has not placed after this long (and wait as long before retrying)")
	fs.DurationVar(&cfg.ParkAfter, "park-after", cfg.ParkAfter, "park a job queued this long in its real pool behind a constraint no node meets, so Nomad stops re-running it on every ended allocation (negative: never)")
	fs.IntVar(&cfg.MaxUnplaced, "max-unplaced", cfg.MaxUnplaced, "admit no more jobs while this many admitted jobs wait for Nomad to place them (its broker queue; negative: no bound, the default)")
	fs.BoolVar(&cfg.NoGCPacing, "no-gc-pacing", cfg.NoGCPacing, "leave garbage collection to the Go runtime (by default the loop collects between rounds when the next round would probably start a collection)")
	fs.DurationVar(&cfg.ProgressInterval, "progress-interval", cfg.ProgressInterval, "how often to read running jobs' progress files")
	fs.Float64Var(&cfg.ProgressReads, "progress-reads", cfg.ProgressReads, "progress file reads a second, all jobs together, least recently read first (each is a request Nomad relays to a client; negative: no bound)")
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "address of the HTTP API")
	fs.StringVar(&cfg.Token, "token", "", "bearer token of the HTTP API (default $CARAVAN_SCHEDULER_TOKEN)")
	fs.BoolVar(&cfg.Pprof, "pprof", false, "serve Go's CPU and heap profiles under /debug/pprof/ on the HTTP API (behind its token)")
	fs.StringVar(&cfg.RendezvousAddr, "rendezvous-addr", cfg.RendezvousAddr, "MASTER_ADDR of a gang: a node ${attr.*}/${meta.*} of rank 0's node, or a literal address")
	fs.StringVar(&cfg.TLSCertFile, "tls-cert", "", "PEM certificate: serve the API over HTTPS (with -tls-key)")
	fs.StringVar(&cfg.TLSKeyFile, "tls-key", "", "PEM private key of -tls-cert")
	fs.DurationVar(&cfg.AdmitDelay, "test-admit-delay", 0, testingOnly+"pause between reading and admitting a job")
	level := fs.String("log-level", "info", "trace, debug, info, warn or error")
	pairsPath := fs.String("colocate-profiles", "", "Gavel's simulation_throughputs.json: pair slowdowns for policies ending in +interference-bounded")
	pairsGPU := fs.String("colocate-gpu", "v100", "GPU type of -colocate-profiles to use (v100, p100, k80)")
	pairsRule := fs.String("colocate-rule", "predicted", "predicted (graph-feature predictor), oracle (measured pairs), naive or exclusive")
	pairsMargin := fs.Float64("colocate-margin", 0, "predicted rule only: accept a pair only under a threshold the fit learns by leave-one-model-out on the measured models, keeping at most this share of accepted jobs over the bound there (0: off)")
	schedulerGossip.register(fs, "gossip-")
	if err := fs.Parse(args); err != nil {
		return cfg, "", err
	}
	if fs.NArg() > 0 {
		return cfg, "", fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.Token == "" {
		cfg.Token = os.Getenv("CARAVAN_SCHEDULER_TOKEN")
	}
	var err error
	if cfg.QueueLimits, err = registry.ParseQueueLimits(*limits); err != nil {
		return cfg, "", err
	}
	if hclog.LevelFromString(*level) == hclog.NoLevel {
		return cfg, "", errors.New("log-level: want trace, debug, info, warn or error")
	}
	if !(*pairsMargin >= 0 && *pairsMargin < 1) {
		return cfg, "", fmt.Errorf("colocate-margin %v: want a share in [0, 1)", *pairsMargin)
	}
	if *pairsMargin > 0 && (*pairsPath == "" || *pairsRule != string(colocate.Predicted)) {
		return cfg, "", errors.New("colocate-margin: needs -colocate-profiles and -colocate-rule predicted")
	}
	if *pairsPath != "" {
		opt := colocate.FitOptions{Partners: true, Margin: colocate.Margin{Target: *pairsMargin}}
		pairs, err := colocate.LoadPairs(*pairsPath, *pairsGPU, colocate.Rule(*pairsRule), opt)
		if err != nil {
			return cfg, "", fmt.Errorf("colocate-profiles: %w", err)
		}
		cfg.Pairs = pairs
	}
	return cfg, *level, nil
}
