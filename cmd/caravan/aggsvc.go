package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/caravan-dl/caravan/aggsvc"
	"github.com/caravan-dl/caravan/aggsvc/auth"
	"github.com/hashicorp/go-hclog"
)

const aggsvcKeyEnv = auth.KeyEnv

type aggsvcFlags struct {
	cfg                      aggsvc.Config
	listen, http, advertise  string
	keyFile, certFile, keyPm string
	metricsToken, level      string
	consul                   bool
	consulAddr               string
}

// runAggsvc is `caravan aggsvc`: the shared gradient-aggregation service,
// and `caravan aggsvc token` which prints a job's (or the admin) token.
func runAggsvc(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "token" {
		return runAggsvcToken(args[1:], stdout, stderr)
	}
	f, err := parseAggsvcFlags(args, stderr)
	if err != nil {
		return err
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "caravan-aggsvc", Level: hclog.LevelFromString(f.level), Output: stderr})
	f.cfg.Logger = log
	srv, err := aggsvc.NewServer(f.cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	hln, err := net.Listen("tcp", f.http)
	if err != nil {
		ln.Close()
		return fmt.Errorf("http: %w", err)
	}
	ctx, stop := signalContext()
	defer stop()
	hs := &http.Server{Handler: srv.Handler(f.metricsToken), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(hln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http", "error", err)
		}
	}()
	go func() { <-ctx.Done(); hs.Close(); srv.Close() }()
	if f.consul {
		go registerAggsvc(ctx, srv, f, ln.Addr(), hln.Addr(), log)
	}
	log.Info("serving", "addr", ln.Addr(), "http", hln.Addr(), "cores", f.cfg.Cores, "tls", f.cfg.TLS != nil)
	if err := srv.Serve(ln); err != nil {
		return err
	}
	log.Info("stopped", "cause", context.Cause(ctx))
	return nil
}

func registerAggsvc(ctx context.Context, srv *aggsvc.Server, f aggsvcFlags, addr, haddr net.Addr, log hclog.Logger) {
	adv := f.advertise
	if adv == "" {
		adv = addr.String()
	}
	host, _, _ := net.SplitHostPort(adv)
	_, hport, _ := net.SplitHostPort(haddr.String())
	cc := aggsvc.ConsulConfig{Address: f.consulAddr, Advertise: adv,
		HealthURL: "http://" + net.JoinHostPort(host, hport) + "/healthz"}
	if err := srv.RegisterConsul(ctx, cc); err != nil {
		log.Error("consul", "error", err)
	}
}

func parseAggsvcFlags(args []string, out io.Writer) (aggsvcFlags, error) {
	f := aggsvcFlags{cfg: aggsvc.DefaultConfig()}
	fs := flag.NewFlagSet("caravan aggsvc", flag.ContinueOnError)
	setUsage(fs, out, "caravan aggsvc [flags]\n       caravan aggsvc token [-admin] [job]\n\n"+
		"Runs the shared gradient-aggregation service. The signing key comes from -key-file or $"+aggsvcKeyEnv+".")
	fs.StringVar(&f.listen, "listen", ":7070", "address of the aggregation protocol")
	fs.StringVar(&f.http, "http", ":7071", "address of GET /metrics and GET /healthz")
	fs.StringVar(&f.advertise, "advertise", "", "host:port registered in Consul (default the listen address)")
	fs.StringVar(&f.keyFile, "key-file", "", "file holding the token signing key (default $"+aggsvcKeyEnv+")")
	fs.IntVar(&f.cfg.Cores, "cores", f.cfg.Cores, "summation pool size shared by all jobs")
	fs.DurationVar(&f.cfg.StepTimeout, "step-timeout", f.cfg.StepTimeout, "fail a partition not every worker pushed in this time")
	fs.Int64Var(&f.cfg.MaxJobBytes, "max-job-bytes", f.cfg.MaxJobBytes, "memory bound of one job's open partitions")
	fs.IntVar(&f.cfg.MaxFrameBytes, "max-frame-bytes", f.cfg.MaxFrameBytes, "largest frame body accepted")
	fs.IntVar(&f.cfg.MaxJobs, "max-jobs", f.cfg.MaxJobs, "most jobs registered at once")
	fs.StringVar(&f.certFile, "tls-cert", "", "PEM certificate: serve the protocol over TLS (with -tls-key)")
	fs.StringVar(&f.keyPm, "tls-key", "", "PEM private key of -tls-cert")
	fs.StringVar(&f.metricsToken, "metrics-token", "", "bearer token of /metrics (default the admin token)")
	fs.BoolVar(&f.consul, "consul", false, "register in Consul ($CONSUL_HTTP_ADDR) as "+aggsvc.ServiceName)
	fs.StringVar(&f.consulAddr, "consul-addr", "", "Consul HTTP address (default $CONSUL_HTTP_ADDR)")
	fs.StringVar(&f.level, "log-level", "info", "trace, debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return f, err // flag.ErrHelp for -h: the CLI exits 0
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	key, err := aggsvcKey(f.keyFile)
	if err != nil {
		return f, err
	}
	f.cfg.Key = key
	if f.metricsToken == "" {
		f.metricsToken = aggsvc.AdminToken(key)
	}
	if (f.certFile == "") != (f.keyPm == "") {
		return f, errors.New("-tls-cert and -tls-key go together")
	}
	if f.certFile != "" {
		cert, err := tls.LoadX509KeyPair(f.certFile, f.keyPm)
		if err != nil {
			return f, fmt.Errorf("-tls-cert: %w", err)
		}
		f.cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return f, nil
}

func aggsvcKey(file string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("-key-file: %w", err)
		}
		return []byte(strings.TrimSpace(string(b))), nil
	}
	if k := os.Getenv(aggsvcKeyEnv); k != "" {
		return []byte(k), nil
	}
	return nil, fmt.Errorf("no signing key: set -key-file or $%s (16 bytes or more)", aggsvcKeyEnv)
}

func runAggsvcToken(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan aggsvc token", flag.ContinueOnError)
	setUsage(fs, stderr, "caravan aggsvc token [-admin] [-key-file F] [job]\n\nPrints the token of <namespace>/<job_id>, or the admin token.")
	admin := fs.Bool("admin", false, "print the admin token (register frames, /metrics)")
	keyFile := fs.String("key-file", "", "file holding the signing key (default $"+aggsvcKeyEnv+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key, err := aggsvcKey(*keyFile)
	if err != nil {
		return err
	}
	switch {
	case *admin:
		fmt.Fprintln(stdout, aggsvc.AdminToken(key))
	case fs.NArg() == 1:
		fmt.Fprintln(stdout, aggsvc.JobToken(key, fs.Arg(0)))
	default:
		return errors.New("give one job (<namespace>/<job_id>) or -admin")
	}
	return nil
}
