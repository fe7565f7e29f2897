package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Options shape a cluster. The zero value is one agent that is both server and
// client, with two simulated GPUs.
type Options struct {
	// Clients is the number of client-only agents beside a server-only agent;
	// 0 runs a single combined server+client agent.
	Clients int
	// GPUs each client declares (simulated). Count < 0 declares none.
	GPUs GPUs
	// RawExec enables Nomad's raw_exec driver too (for side-by-side benchmarks).
	RawExec bool
	// Dir holds configs, data dirs and logs; a temp dir when empty.
	Dir string
	// ExtraConfig is appended to every agent's HCL.
	ExtraConfig string
	// PluginConfig is added inside every client's caravan-driver config
	// block (e.g. `device_dir = "/tmp/fake-dev"`).
	PluginConfig string
	// PluginConfigEach, when set, adds per-client text to that block; its
	// argument counts client agents from 0 (e.g. a memshare block, whose
	// listen ports differ per client).
	PluginConfigEach func(client int) string
	// ServerConfig is added inside the server agent's server block (e.g.
	// `num_schedulers = 8`, which scale needs: see e2e/scale).
	ServerConfig string
	// ServerOnly runs one server-only agent and no client (Clients must be
	// 0): for clients simulated elsewhere (internal/nodesim).
	ServerOnly bool
	// Consul starts a Consul dev agent first and points every Nomad agent
	// at it (service registration, aggregator discovery).
	Consul bool
	// Ready is how long to wait for the cluster (default 90s).
	Ready time.Duration
}

func (o *Options) defaults() error {
	if o.GPUs.Count == 0 {
		o.GPUs = GPUs{Model: "Simulated A100 40GB", MemoryMiB: 40960, Count: 2}
	}
	if o.Ready == 0 {
		o.Ready = 90 * time.Second
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "caravan-e2e-")
		if err != nil {
			return err
		}
		o.Dir = d
	}
	return nil
}

// Cluster is a running set of agents and an API client for it.
type Cluster struct {
	Server  *Agent
	Clients []*Agent // includes Server when it is also the client
	Consul  *Agent   // nil unless Options.Consul
	API     *api.Client
	Bins    Binaries
	Dir     string
}

// Start builds configs, launches the agents and waits until every client node
// is ready with a healthy caravan driver.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	bins, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	if err := o.defaults(); err != nil {
		return nil, err
	}
	c := &Cluster{Bins: bins, Dir: o.Dir}
	ctx, cancel := context.WithTimeout(ctx, o.Ready)
	defer cancel()
	if err := c.start(ctx, o); err != nil {
		return nil, errors.Join(fmt.Errorf("%w (agent logs in %s)", err, o.Dir), c.Stop())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, o Options) error {
	if err := c.startConsul(ctx, &o); err != nil {
		return err
	}
	if err := c.launch(o); err != nil {
		return err
	}
	return c.waitReady(ctx, len(c.Clients))
}

// startConsul runs the Consul dev agent when asked and adds the consul block
// to every Nomad agent's config.
func (c *Cluster) startConsul(ctx context.Context, o *Options) error {
	if !o.Consul {
		return nil
	}
	a, err := startConsul(c.Bins.Consul, o.Dir)
	if err != nil {
		return err
	}
	c.Consul = a
	o.ExtraConfig += nomadConsulBlock(c.ConsulHostPort())
	// The caravan driver resolves `aggregator` services in this Consul.
	o.PluginConfig = strings.TrimSpace(fmt.Sprintf("consul_address = %q\n    %s", c.ConsulHostPort(), o.PluginConfig))
	return waitConsul(ctx, a)
}

func (c *Cluster) launch(o Options) error {
	gpus := o.GPUs
	if gpus.Count < 0 {
		gpus.Count = 0
	}
	workloads := ""
	if root, err := RepoRoot(); err == nil {
		if fi, err := os.Stat(filepath.Join(root, "workloads")); err == nil && fi.IsDir() {
			workloads = filepath.Join(root, "workloads")
		}
	}
	n := 1 + o.Clients
	ports, err := FreePorts(3 * n)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		cfg := agentConfig{
			Name: fmt.Sprintf("client-%d", i), PluginDir: c.Bins.PluginDir,
			HTTP: ports[3*i], RPC: ports[3*i+1], Serf: ports[3*i+2],
			Client: true, GPUs: gpus, RawExec: o.RawExec, Extra: o.ExtraConfig,
			PluginExtra: o.PluginConfig, Workloads: workloads, ServerExtra: o.ServerConfig,
		}
		if i == 0 {
			cfg.Name, cfg.Server, cfg.Client = "server", true, o.Clients == 0 && !o.ServerOnly
		} else {
			cfg.Servers = []string{c.Server.RPCAddr}
		}
		if cfg.Client && o.PluginConfigEach != nil {
			cfg.PluginExtra += "\n" + o.PluginConfigEach(len(c.Clients))
		}
		cfg.DataDir = filepath.Join(o.Dir, cfg.Name)
		a, err := newAgent(c.Bins.Nomad, o.Dir, cfg)
		if err != nil {
			return err
		}
		if err := a.Start(); err != nil {
			return err
		}
		if i == 0 {
			c.Server = a
			cfg := api.DefaultConfig()
			cfg.Address = a.HTTPAddr
			api, err := api.NewClient(cfg)
			if err != nil {
				return err
			}
			c.API = api
		}
		if cfg.Client {
			c.Clients = append(c.Clients, a)
		}
	}
	return nil
}

// waitReady polls until n nodes are ready and their caravan driver is healthy.
func (c *Cluster) waitReady(ctx context.Context, n int) error {
	var last error
	for {
		if last = c.ready(n); last == nil {
			return nil
		}
		if c.Server.Exited() {
			return errors.New("devcluster: nomad server exited during start")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devcluster: cluster not ready: %v", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (c *Cluster) ready(n int) error {
	// A client registering before the server has a leader and an active
	// root key is refused ("keyring has not been initialized yet").
	if leader, err := c.API.Status().Leader(); err != nil || leader == "" {
		return fmt.Errorf("no leader yet (%v)", err)
	}
	// (With ACLs on and no token yet, the keyring cannot be read: skip.)
	if keys, _, err := c.API.Keyring().List(nil); !isForbidden(err) && (err != nil || !anyActive(keys)) {
		return fmt.Errorf("no active root key yet (%v)", err)
	}
	nodes, _, err := c.API.Nodes().List(nil)
	if err != nil {
		return err
	}
	healthy := 0
	for _, stub := range nodes {
		d := stub.Drivers["caravan"]
		if stub.Status == "ready" && d != nil && d.Detected && d.Healthy {
			healthy++
		}
	}
	if healthy < n {
		return fmt.Errorf("%d of %d nodes ready with a healthy caravan driver", healthy, n)
	}
	return nil
}

// Stop purges every job (so no task outlives the test), then stops the agents.
func (c *Cluster) Stop() error {
	if c.API != nil && c.Server != nil && !c.Server.Exited() {
		c.purgeJobs(30 * time.Second)
	}
	var errs []error
	for i := len(c.Clients) - 1; i >= 0; i-- {
		if c.Clients[i] != c.Server {
			errs = append(errs, c.Clients[i].Stop(15*time.Second))
		}
	}
	if c.Server != nil {
		errs = append(errs, c.Server.Stop(15*time.Second))
	}
	if c.Consul != nil {
		errs = append(errs, c.Consul.Stop(15*time.Second))
	}
	return errors.Join(errs...)
}

func (c *Cluster) purgeJobs(wait time.Duration) {
	jobs, _, err := c.API.Jobs().List(nil)
	if err != nil {
		return
	}
	for _, j := range jobs {
		// Best effort on the way down: the agents are stopped next anyway.
		_ = c.StopJob(j.ID, wait)
	}
}

// StopJob stops a job, waits until none of its allocations runs (so what it
// held, GPU shares included, is free), then purges it so its ID can be reused.
func (c *Cluster) StopJob(id string, wait time.Duration) (err error) {
	if _, _, err := c.API.Jobs().Deregister(id, false, nil); err != nil {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	defer func() {
		if _, _, perr := c.API.Jobs().Deregister(id, true, nil); perr != nil {
			err = errors.Join(err, fmt.Errorf("purge %s: %w", id, perr))
		}
	}()
	filter := &api.QueryOptions{Filter: fmt.Sprintf("JobID == %q", id)}
	deadline := time.Now().Add(wait)
	for {
		allocs, _, err := c.API.Allocations().List(filter)
		if err == nil && !anyRunning(allocs) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("job %s still has live allocations after %s", id, wait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func isForbidden(err error) bool {
	var ue api.UnexpectedResponseError
	return errors.As(err, &ue) && ue.StatusCode() == 403
}

func anyActive(keys []*api.RootKeyMeta) bool {
	for _, k := range keys {
		if k.State == api.RootKeyStateActive {
			return true
		}
	}
	return false
}

func anyRunning(allocs []*api.AllocationListStub) bool {
	for _, a := range allocs {
		if a.ClientStatus == "running" || a.ClientStatus == "pending" {
			return true
		}
	}
	return false
}
