package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/caravan-dl/caravan/internal/nodesim"
)

// runNodesim is `caravan nodesim`: N simulated Nomad clients with caravan
// GPUs in this process, against real servers, until interrupted.
func runNodesim(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caravan nodesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c nodesim.Config
	servers := fs.String("servers", "127.0.0.1:4647", "Nomad servers' RPC addresses, comma-separated")
	fs.IntVar(&c.Nodes, "nodes", 10, "simulated nodes")
	fs.IntVar(&c.GPUs, "gpus", 8, "simulated GPUs per node")
	fs.StringVar(&c.Prefix, "prefix", "sim", "node names are <prefix>-<i>")
	fs.StringVar(&c.Dir, "dir", "", "state folder (a temp dir when empty)")
	fs.StringVar(&c.NodePool, "node-pool", "default", "node pool of every node")
	fs.StringVar(&c.Datacenter, "datacenter", "dc1", "datacenter of every node")
	level := fs.String("log-level", "warn", "the simulated clients' log level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.Servers = strings.Split(*servers, ",")
	c.LogLevel = hclog.LevelFromString(*level)
	c.Logger = hclog.New(&hclog.LoggerOptions{Name: "nodesim", Output: stderr})
	set, err := nodesim.Start(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d simulated nodes with %d GPUs each joined %s (state in %s); Ctrl-C stops them\n",
		len(set.Nodes), c.GPUs, *servers, set.Dir)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	fmt.Fprintln(stdout, "stopping simulated nodes")
	return set.Shutdown()
}
