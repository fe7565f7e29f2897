package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/caravan-dl/caravan/tune"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

func tuneRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan tune run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	poll := fs.Duration("poll", time.Second, "how often trials are checked")
	ns := fs.String("namespace", "", "Nomad namespace (default: NOMAD_NAMESPACE or default)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: caravan tune run [flags] spec.hcl\n\nDispatches the spec's trials (a parameterized Nomad job), follows them,\npromotes and stops them, and prints the best configuration. Nomad from\nNOMAD_ADDR/NOMAD_TOKEN. Re-run after a crash to resume from the saved state.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("tune run: want one spec file")
	}
	src, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	spec, err := tune.ParseSpec(fs.Arg(0), src)
	if err != nil {
		return err
	}
	cl, err := nomadCluster(*ns)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := hclog.New(&hclog.LoggerOptions{Name: "tune", Output: stderr, Level: hclog.Info})
	ct, err := tune.NewController(ctx, cl, *spec, tune.ControllerConfig{Poll: *poll, Out: stdout, Logger: log})
	if err != nil {
		return err
	}
	_, err = ct.Run(ctx)
	return err
}

func tuneStatus(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan tune status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ns := fs.String("namespace", "", "Nomad namespace (default: NOMAD_NAMESPACE or default)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: caravan tune status [flags] [name]\n\nWithout a name, lists tuning jobs; with one, prints its trials.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	cl, err := nomadCluster(*ns)
	if err != nil {
		return err
	}
	ctx := context.Background()
	names := fs.Args()
	if len(names) == 0 {
		paths, err := cl.List(ctx, tune.StatePrefix)
		if err != nil {
			return err
		}
		if len(paths) == 0 {
			fmt.Fprintln(stdout, "no tuning jobs")
			return nil
		}
		for _, p := range paths {
			names = append(names, strings.TrimPrefix(p, tune.StatePrefix))
		}
	}
	for _, n := range names {
		st, err := tune.LoadState(ctx, cl, n)
		if err != nil {
			return err
		}
		tune.WriteSummary(stdout, n, st)
		if len(fs.Args()) > 0 {
			tune.WriteTable(stdout, st)
		}
	}
	return nil
}

func nomadCluster(ns string) (*tune.NomadCluster, error) {
	c, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		return nil, err
	}
	return &tune.NomadCluster{API: c, Namespace: ns}, nil
}
