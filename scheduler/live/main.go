package live

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

// SchedulerMain is `caravan scheduler`: it parses args, connects to Nomad
// (NOMAD_ADDR, NOMAD_TOKEN and the other NOMAD_* variables), serves the
// HTTP API and schedules until SIGINT or SIGTERM. It returns the exit code.
func SchedulerMain(args []string) int {
	cfg, level, err := parseSchedulerFlags(args, os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "caravan scheduler:", err)
		return 2
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "caravan-scheduler", Level: hclog.LevelFromString(level)})
	client, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		log.Error("cannot make a Nomad client", "error", err)
		return 1
	}
	s, err := New(cfg, client, log)
	if err != nil {
		log.Error("bad configuration", "error", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := s.serve(ctx); err != nil {
		log.Error("scheduler stopped", "error", err)
		return 1
	}
	return 0
}

// serve runs the HTTP API beside Run until ctx ends.
func (s *Scheduler) serve(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	go srv.Serve(ln)
	s.log.Info("serving the scheduler API", "addr", ln.Addr().String())
	err = s.Run(ctx)
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(shut)
	return err
}

func parseSchedulerFlags(args []string, out io.Writer) (Config, string, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("caravan scheduler", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.Policy, "policy", cfg.Policy, "scheduling policy, e.g. fifo, tiresias-las, tiresias-gittins+consolidated")
	fs.DurationVar(&cfg.Quantum, "quantum", cfg.Quantum, "re-decide at least this often")
	fs.DurationVar(&cfg.Debounce, "debounce", cfg.Debounce, "wait this long after an event for the rest of its burst")
	limits := fs.String("las-limits", "", "Tiresias queue limits in GPU-seconds, comma-separated (default: the paper's)")
	fs.StringVar(&cfg.Namespace, "namespace", cfg.Namespace, "Nomad namespace of the jobs")
	fs.StringVar(&cfg.QueuePool, "queue-pool", cfg.QueuePool, "node pool users submit into")
	fs.StringVar(&cfg.Pool, "pool", cfg.Pool, "node pool to admit into when a job's meta has no caravan.pool")
	fs.StringVar(&cfg.StatePath, "state-path", cfg.StatePath, "Nomad Variable holding the scheduler's state")
	fs.StringVar(&cfg.LockPath, "lock-path", cfg.LockPath, "Nomad Variable used as the leader lock")
	fs.DurationVar(&cfg.LockTTL, "lock-ttl", cfg.LockTTL, "leader lock TTL (at least 10s)")
	fs.DurationVar(&cfg.LockDelay, "lock-delay", cfg.LockDelay, "wait after a lost lock before another instance may lead")
	fs.DurationVar(&cfg.ReasonInterval, "reason-interval", cfg.ReasonInterval, "least time between two caravan.reason rewrites of a job")
	fs.DurationVar(&cfg.ProgressInterval, "progress-interval", cfg.ProgressInterval, "how often to read running jobs' progress files")
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "address of the HTTP API")
	fs.StringVar(&cfg.Token, "token", os.Getenv("CARAVAN_SCHEDULER_TOKEN"), "bearer token of the HTTP API (default $CARAVAN_SCHEDULER_TOKEN)")
	fs.DurationVar(&cfg.AdmitDelay, "test-admit-delay", 0, "testing only: pause between reading and admitting a job")
	level := fs.String("log-level", "info", "trace, debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return cfg, "", err
	}
	if fs.NArg() > 0 {
		return cfg, "", fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if cfg.LASLimits, err = parseLimits(*limits); err != nil {
		return cfg, "", err
	}
	return cfg, *level, nil
}

func parseLimits(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("-las-limits: %q is not a number", f)
		}
		out = append(out, v)
	}
	return out, nil
}
