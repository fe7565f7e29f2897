package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/caravan-dl/caravan/scheduler/live"
)

// runQueue is `caravan queue`: it prints the scheduler's queue, running
// jobs first, then queued jobs in priority order with why each waits.
func runQueue(args []string, stdout, stderr io.Writer) error {
	c := live.QueueClient{}
	fs := flag.NewFlagSet("caravan queue", flag.ContinueOnError)
	setUsage(fs, stderr, "caravan queue [flags]\n\nShows the live scheduler's queue: rank, attained service, why each job waits.")
	fs.StringVar(&c.Addr, "addr", "", "scheduler API: a URL or host:port as 'nomad service info' prints it (default $CARAVAN_SCHEDULER_ADDR, else 127.0.0.1:4780)")
	fs.StringVar(&c.Token, "token", "", "bearer token (default $CARAVAN_SCHEDULER_TOKEN)")
	fs.StringVar(&c.CACert, "ca-cert", "", "PEM CA of the scheduler's TLS certificate; bare host:port then means https (default $CARAVAN_SCHEDULER_CACERT)")
	asJSON := fs.Bool("json", false, "print the raw JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c.Addr = orEnv(c.Addr, "CARAVAN_SCHEDULER_ADDR", "127.0.0.1:4780")
	c.Token = orEnv(c.Token, "CARAVAN_SCHEDULER_TOKEN", "")
	c.CACert = orEnv(c.CACert, "CARAVAN_SCHEDULER_CACERT", "")
	v, raw, err := c.Fetch(context.Background())
	if err != nil {
		return err
	}
	if *asJSON {
		_, err = stdout.Write(raw)
		return err
	}
	live.PrintQueue(stdout, v)
	return nil
}

// orEnv is v, else $key, else def.
func orEnv(v, key, def string) string {
	if v != "" {
		return v
	}
	if e := os.Getenv(key); e != "" {
		return e
	}
	return def
}
