package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/caravan-dl/caravan/serve"
	consul "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"
)

var serveCommands = map[string]command{
	"run":     {"run the inference front end (workers from Consul and/or -worker)", serveRun},
	"profile": {"measure a real model worker's batch latencies over a grid (CSV)", serveProfile},
	"bench":   {"replay the Azure LLM trace: Orloj vs Clockwork vs FIFO (simulated or real workers)", serveBench},
}

func runServe(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || serveCommands[args[0]].run == nil {
		fmt.Fprintln(stderr, "usage: caravan serve <run|profile|bench> [flags]  (-h for flags)")
		names := make([]string, 0, len(serveCommands))
		for n := range serveCommands {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stderr, "  %-8s %s\n", n, serveCommands[n].summary)
		}
		if len(args) == 0 {
			return errors.New("serve: no subcommand")
		}
		if args[0] == "-h" || args[0] == "--help" {
			return nil
		}
		return fmt.Errorf("serve: unknown subcommand %q", args[0])
	}
	return serveCommands[args[0]].run(args[1:], stdout, stderr)
}

// modelFlags collects -model name=...,slo=...,features=...,max_batch=...
type modelFlags map[string]serve.ModelConfig

func (m modelFlags) String() string { return fmt.Sprint(map[string]serve.ModelConfig(m)) }

func (m modelFlags) Set(v string) error {
	var name string
	var mc serve.ModelConfig
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-model %q: want key=value pairs", kv)
		}
		var err error
		switch k {
		case "name":
			name = val
		case "slo":
			mc.SLO, err = time.ParseDuration(val)
		case "features":
			mc.Features, err = strconv.ParseBool(val)
		case "max_batch":
			mc.Policy.MaxBatch, err = strconv.Atoi(val)
		case "max_input":
			mc.Limits.MaxInput, err = strconv.Atoi(val)
		case "max_output":
			mc.Limits.MaxOutput, err = strconv.Atoi(val)
		default:
			return fmt.Errorf("-model: unknown key %q (name, slo, features, max_batch, max_input, max_output)", k)
		}
		if err != nil {
			return fmt.Errorf("-model %s: %w", k, err)
		}
	}
	if name == "" {
		return errors.New("-model: name= is required")
	}
	m[name] = mc
	return nil
}

// workerFlags collects -worker model=host:port.
type workerFlags map[string][]string

func (w workerFlags) String() string { return fmt.Sprint(map[string][]string(w)) }

func (w workerFlags) Set(v string) error {
	model, addr, ok := strings.Cut(v, "=")
	if !ok || model == "" || addr == "" {
		return fmt.Errorf("-worker %q: want model=host:port", v)
	}
	w[model] = append(w[model], addr)
	return nil
}

func serveRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan serve run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg serve.Config
	models, workers := modelFlags{}, workerFlags{}
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:8700", "listen address")
	fs.StringVar(&cfg.Policy, "policy", "orloj", "batch policy: orloj, clockwork or fifo")
	fs.StringVar(&cfg.TLSCertFile, "tls-cert", "", "TLS certificate (with -tls-key)")
	fs.StringVar(&cfg.TLSKeyFile, "tls-key", "", "TLS key")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", 1<<20, "request body limit in bytes")
	fs.Var(models, "model", "a served model: name=lstm-gen,slo=300ms,features=true,max_batch=16 (repeatable)")
	fs.Var(workers, "worker", "a static worker: model=host:port (repeatable; beside Consul discovery)")
	consulAddr := fs.String("consul", os.Getenv("CONSUL_HTTP_ADDR"), "Consul address for worker discovery (empty: none)")
	service := fs.String("worker-service", serve.DefaultWorkerService, "Consul service of the model workers (tagged with the model)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Models = models
	cfg.Token = os.Getenv("CARAVAN_SERVE_TOKEN")
	if cfg.Token == "" {
		return errors.New("serve run: CARAVAN_SERVE_TOKEN (the clients' bearer token) is required")
	}
	wtoken := os.Getenv("CARAVAN_SERVE_WORKER_TOKEN")
	if wtoken == "" {
		return errors.New("serve run: CARAVAN_SERVE_WORKER_TOKEN (the workers' bearer token) is required")
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "serve", Output: stderr, Level: hclog.Info})
	cfg.Logger = log
	f, err := serve.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go f.Run(ctx)
	for model, addrs := range workers {
		ws := make([]serve.Worker, len(addrs))
		for i, a := range addrs {
			ws[i] = serve.NewHTTPWorker(a, wtoken, nil)
		}
		if err := f.SetWorkers(model, ws); err != nil {
			return err
		}
	}
	if *consulAddr != "" {
		cc := consul.DefaultConfig()
		cc.Address = *consulAddr
		client, err := consul.NewClient(cc)
		if err != nil {
			return fmt.Errorf("serve run: consul: %w", err)
		}
		d := &serve.Discovery{Consul: client, Service: *service, WorkerToken: wtoken, Logger: log}
		go d.Run(ctx, f)
	}
	ln, err := f.Listen()
	if err != nil {
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "policy", cfg.Policy, "models", f.Models())
	fmt.Fprintf(stdout, "LISTENING %s\n", ln.Addr())
	return f.Serve(ctx, ln)
}

func serveProfile(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan serve profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "lstm-gen", "model to measure (a local worker is started)")
	batches := fs.String("batches", "1,2,4,8,16", "batch sizes")
	ins := fs.String("ins", "8,128,512,2048", "input lengths (tokens)")
	outs := fs.String("outs", "4,32,128,512", "output lengths (tokens)")
	reps := fs.Int("reps", 5, "measurements per grid point")
	out := fs.String("out", "", "CSV file (default stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var g serve.ProfileGrid
	var err error
	for _, p := range []struct {
		s   string
		dst *[]int
	}{{*batches, &g.Batches}, {*ins, &g.Ins}, {*outs, &g.Outs}} {
		if *p.dst, err = intList(p.s); err != nil {
			return err
		}
	}
	g.Reps = *reps
	wd, _ := os.Getwd()
	script, err := serve.WorkerScript(wd)
	if err != nil {
		return err
	}
	ctx := context.Background()
	pw, err := serve.StartPyWorker(ctx, serve.PyWorkerOptions{Model: *model, Token: "profile", Script: script, Stderr: os.Stderr})
	if err != nil {
		return err
	}
	defer pw.Kill()
	pts, err := serve.Measure(ctx, serve.NewHTTPWorker(pw.Addr(), "profile", nil), *model, g)
	if err != nil {
		return err
	}
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return serve.WriteProfile(w, pts)
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: not a list of non-negative integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func serveBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan serve bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "../shared/traces/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv", "Azure LLM inference trace CSV")
	profile := fs.String("profile", "serve/testdata/profiles/lstm-gen.csv", "measured batch latencies of the real model (caravan serve profile)")
	static := fs.Bool("static", false, "the model's cost ignores lengths (e.g. static-cnn)")
	n := fs.Int("requests", 3000, "trace requests replayed (the first tenth warms up, uncounted)")
	skip := fs.Int("skip", 0, "trace requests skipped first")
	speedups := fs.String("speedups", "5,10,20,40", "arrival-rate multipliers of the trace")
	slos := fs.String("slos", "150ms,400ms", "per-request deadlines")
	workers := fs.Int("workers", 2, "simulated workers")
	maxBatch := fs.Int("max-batch", 16, "largest batch")
	policies := fs.String("policies", "orloj,clockwork,fifo", "policies compared")
	noNoise := fs.Bool("no-noise", false, "measured medians only (a dedicated core), without the measured spread")
	real := fs.Int("real", 0, "run N real Python workers behind a real front end on loopback instead of the simulator")
	model := fs.String("model", "lstm-gen", "with -real: the model the workers run")
	seed := fs.Bool("seed", false, "with -real: seed the front end's distributions with -profile (default: learn online)")
	inDiv := fs.Int("in-div", 4, "trace input tokens per model input token")
	outDiv := fs.Int("out-div", 2, "trace output tokens per generated token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := serve.BenchConfig{Features: !*static, InDiv: *inDiv, OutDiv: *outDiv, MaxIn: 2048, MaxOut: 512,
		Requests: *n, Skip: *skip, Workers: *workers, MaxBatch: *maxBatch, Overhead: time.Millisecond,
		Policies: strings.Split(*policies, ","), NoNoise: *noNoise}
	var err error
	if c.Trace, err = serve.LoadAzureLLM(*tracePath); err != nil {
		return err
	}
	pf, err := os.Open(*profile)
	if err != nil {
		return err
	}
	defer pf.Close()
	if c.Profile, err = serve.ReadProfile(pf); err != nil {
		return err
	}
	for _, s := range strings.Split(*speedups, ",") {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("-speedups: %q is not a positive number", s)
		}
		c.Speedups = append(c.Speedups, v)
	}
	for _, s := range strings.Split(*slos, ",") {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("-slos: %q is not a positive duration", s)
		}
		c.SLOs = append(c.SLOs, d)
	}
	if *real > 0 {
		wd, _ := os.Getwd()
		script, err := serve.WorkerScript(wd)
		if err != nil {
			return err
		}
		rows, err := serve.LiveBench{Bench: c, Model: *model, Workers: *real, Script: script, Seed: *seed}.Run(context.Background())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Real: %d Python %s workers (PyTorch, 1 thread each) behind the front end on loopback, open-loop HTTP load.\n\n", *real, *model)
		serve.WriteBenchTable(stdout, rows)
		return nil
	}
	rows, err := serve.RunBench(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Simulated executor: %d workers, batch latencies from %s (measured on the real model; %s).\n\n",
		*workers, *profile, map[bool]string{true: "medians only", false: "medians times the measured spread"}[*noNoise])
	serve.WriteBenchTable(stdout, rows)
	return nil
}
