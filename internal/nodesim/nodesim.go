// Package nodesim runs many simulated Nomad clients in one process against
// real Nomad servers, to measure Caravan at cluster scale without a cluster.
//
// Each simulated node is a real github.com/hashicorp/nomad/client: it
// registers, heartbeats, receives allocations and reports their state over
// Nomad's RPC exactly as a client agent does, so the servers (and the
// scheduler watching them) cannot tell it from a real node. Two parts are
// simulated:
//
//   - its only driver is the real caravan driver, loaded in process with
//     simulated GPUs, so the node's fingerprint is what a caravan node shows
//     (driver.caravan.gpu.*, backend = simulated);
//   - its allocations start no process: their tasks run at once and
//     complete after the duration in meta "caravan.sim_duration" (a Go
//     duration; batch default 10s), or are killed when the server stops the
//     allocation (a job stop or a Caravan preemption).
//
// Nodes carry meta caravan.nodesim = "true" so nobody mistakes them for
// real ones. Servers that hold many nodes need Nomad's limits raised; see
// the package README.
package nodesim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// Config shapes a set of simulated nodes.
type Config struct {
	// Servers are the Nomad servers' RPC addresses (host:port). Required.
	Servers []string
	// Nodes is how many clients to start. Default 1.
	Nodes int
	// Prefix names the nodes <Prefix>-<i>. Default "sim".
	Prefix string
	// Dir holds each node's state; a temp dir when empty.
	Dir string
	// GPUs per node and their model and memory. Defaults 8, "Simulated
	// A100 40GB", 40960 MiB.
	GPUs         int
	GPUModel     string
	GPUMemoryMiB int
	// CPUMHz and MemoryMB each node offers. Defaults 64,000 and 512 GiB.
	CPUMHz, MemoryMB int
	// Datacenter and NodePool of every node. Defaults "dc1", "default".
	Datacenter, NodePool string
	// Logger for progress; LogLevel and LogOutput for the clients' own
	// logs (default warnings to stderr).
	Logger    hclog.Logger
	LogLevel  hclog.Level
	LogOutput io.Writer
}

func (c *Config) defaults() error {
	if len(c.Servers) == 0 {
		return errors.New("nodesim: no Nomad server address")
	}
	if c.Nodes < 0 || c.GPUs < 0 {
		return errors.New("nodesim: node and GPU counts must not be negative")
	}
	set := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	set(&c.Nodes, 1)
	set(&c.GPUs, 8)
	set(&c.GPUMemoryMiB, 40960)
	set(&c.CPUMHz, 64_000)
	set(&c.MemoryMB, 512*1024)
	for p, v := range map[*string]string{&c.Prefix: "sim", &c.GPUModel: "Simulated A100 40GB", &c.Datacenter: "dc1", &c.NodePool: "default"} {
		if *p == "" {
			*p = v
		}
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.LogLevel == hclog.NoLevel {
		c.LogLevel = hclog.Warn
	}
	if c.LogOutput == nil {
		c.LogOutput = os.Stderr
	}
	if c.Dir == "" {
		d, err := os.MkdirTemp("", "caravan-nodesim-")
		if err != nil {
			return err
		}
		c.Dir = d
	}
	return nil
}

// Set is a running set of simulated nodes.
type Set struct {
	Nodes []*Node
	Dir   string
	// mounts is the one-line mount table the set's clients read host disk
	// statistics from, "" when they read the host's (mounts.go).
	mounts string
}

// Start starts the nodes one after another; on an error the ones started
// are shut down.
func Start(cfg Config) (*Set, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	s := &Set{Dir: cfg.Dir}
	mounts, err := narrowMounts(cfg.Dir)
	if err != nil {
		cfg.Logger.Warn("simulated nodes read the host's whole mount table for disk statistics", "error", err)
	}
	s.mounts = mounts
	for i := 0; i < cfg.Nodes; i++ {
		n, err := startNode(cfg, i)
		if err != nil {
			return nil, errors.Join(err, s.Shutdown())
		}
		s.Nodes = append(s.Nodes, n)
		if (i+1)%100 == 0 {
			cfg.Logger.Info("started simulated nodes", "count", i+1, "of", cfg.Nodes)
		}
	}
	return s, nil
}

// Shutdown stops every node (in parallel: each waits on its RPCs).
func (s *Set) Shutdown() error {
	var wg sync.WaitGroup
	errs := make([]error, len(s.Nodes))
	for i, n := range s.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.Client.Shutdown(); err != nil {
				errs[i] = fmt.Errorf("%s: %w", n.Name, err)
			}
		}()
	}
	wg.Wait()
	restoreMounts(s.mounts)
	return errors.Join(errs...)
}
