// Package driver is the caravan Nomad task driver: it launches deep-learning
// processes through Nomad's shared executor and gives them whole or
// fractional GPUs, recorded in a node-local ledger and enforced with CUDA MPS.
package driver

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/caravan-dl/caravan/driver/mps"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/drivers/shared/eventer"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
	"github.com/hashicorp/nomad/plugins/drivers/fsisolation"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"
)

const (
	// PluginName is the driver name jobspecs use: driver = "caravan".
	PluginName = "caravan"
	// PluginVersion is reported to Nomad.
	PluginVersion = "0.1.0"
	// taskHandleVersion versions the driver state stored in task handles.
	taskHandleVersion = 1
)

var pluginInfo = &base.PluginInfoResponse{
	Type:              base.PluginTypeDriver,
	PluginApiVersions: []string{drivers.ApiVersion010},
	PluginVersion:     PluginVersion,
	Name:              PluginName,
}

// capabilities of an isolated driver. FSIsolation "image" tells the client
// that the driver builds the task's root itself (from read-only binds, see
// isolation.go) and that the task sees /alloc, /local and /secrets: the
// client then neither copies chroot_env into every task dir, as it does
// for exec, nor hands the task the agent's environment.
var capabilities = &drivers.Capabilities{
	SendSignals: true,
	Exec:        true,
	FSIsolation: fsisolation.Image,
	NetIsolationModes: []drivers.NetIsolationMode{
		drivers.NetIsolationModeHost,
		drivers.NetIsolationModeGroup,
	},
	MountConfigs: drivers.MountConfigSupportAll,
}

// unisolatedCapabilities are those of no_isolation = true (as raw_exec).
var unisolatedCapabilities = func() *drivers.Capabilities {
	c := *capabilities
	c.FSIsolation = fsisolation.None
	c.MountConfigs = drivers.MountConfigSupportNone
	return &c
}()

// Driver implements drivers.DriverPlugin.
type Driver struct {
	ctx     context.Context
	cancel  context.CancelFunc
	logger  hclog.Logger
	eventer *eventer.Eventer
	opts    options
	tasks   *taskStore
	changed *notifier // fires when the ledger changes, to re-fingerprint

	// admitMu is held (read) by StartTask and RecoverTask and (write) by
	// the orphan sweep, so the sweep never sees an untracked fresh grant.
	admitMu sync.RWMutex

	mu          sync.RWMutex
	config      Config // defaulted; zero until SetConfig
	nomadConfig *base.ClientDriverConfig
	node        *nodeGPUs // nil until SetConfig
	gcStarted   bool      // the checkpoint collector runs once per plugin

	mem    memshareNode // remote memory: donor server and consumer endpoints
	gossip gossipNode   // gossip member (gossip.go); off without a gossip block
}

// Option customises a Driver, mainly so tests can inject hardware.
type Option func(*options)

type options struct {
	nvml      nvml.Interface
	mpsRunner mps.Runner
	resolver  serviceResolver
	jobRun    JobRunLookup
}

// WithNVML makes gpu_backend = "nvml" use lib instead of the real library
// (tests pass go-nvml's dgxh100 mock).
func WithNVML(lib nvml.Interface) Option { return func(o *options) { o.nvml = lib } }

// WithMPSRunner runs the MPS control program through r (tests record the
// calls instead of starting daemons).
func WithMPSRunner(r mps.Runner) Option { return func(o *options) { o.mpsRunner = r } }

// New returns the caravan driver; main passes it to plugins.Serve.
func New(logger hclog.Logger, opts ...Option) drivers.DriverPlugin {
	ctx, cancel := context.WithCancel(context.Background())
	logger = logger.Named(PluginName)
	d := &Driver{
		ctx:     ctx,
		cancel:  cancel,
		logger:  logger,
		eventer: eventer.NewEventer(ctx, logger),
		tasks:   newTaskStore(),
		changed: newNotifier(),
	}
	for _, o := range opts {
		o(&d.opts)
	}
	return d
}

func (d *Driver) PluginInfo() (*base.PluginInfoResponse, error) { return pluginInfo, nil }

func (d *Driver) ConfigSchema() (*hclspec.Spec, error) { return configSpec, nil }

func (d *Driver) TaskConfigSchema() (*hclspec.Spec, error) { return taskConfigSpec, nil }

// Capabilities depends on no_isolation; the client asks for each task.
func (d *Driver) Capabilities() (*drivers.Capabilities, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.config.NoIsolation {
		return unisolatedCapabilities, nil
	}
	return capabilities, nil
}

// SetConfig validates the plugin config and opens the GPU inventory, ledger
// and MPS manager. Invalid values are errors; a node whose GPUs cannot be
// opened still loads and reports itself unhealthy in the fingerprint.
func (d *Driver) SetConfig(cfg *base.Config) error {
	var raw Config
	if len(cfg.PluginConfig) != 0 {
		if err := base.MsgPackDecode(cfg.PluginConfig, &raw); err != nil {
			return fmt.Errorf("caravan plugin config: %v", err)
		}
	}
	conf := raw.withDefaults()
	if err := conf.validate(); err != nil {
		return fmt.Errorf("caravan plugin config: %w", err)
	}
	if err := d.mem.configure(conf.Memshare, d.logger); err != nil {
		return fmt.Errorf("caravan plugin config: %w", err)
	}
	if err := d.gossip.configure(conf.Gossip, d, conf); err != nil {
		return fmt.Errorf("caravan plugin config: %w", err)
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	if cfg.AgentConfig != nil {
		d.nomadConfig = cfg.AgentConfig.Driver
	}
	if d.node != nil && configEqual(d.config, conf) {
		return nil
	}
	old := d.node
	d.config = conf
	d.node = openNodeGPUs(conf, d.opts, d.logger)
	if old != nil {
		old.close()
	}
	go d.sweepOrphansAfter(d.node, orphanGrace)
	if retention, err := conf.retention(); err == nil && !d.gcStarted {
		d.gcStarted = true
		go d.gcCheckpointsLoop(conf.CheckpointRoot, retention)
	}
	d.changed.notify()
	return nil
}

// gpus returns the node's GPU state, or an error before SetConfig.
func (d *Driver) gpus() (*nodeGPUs, Config, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.node == nil {
		return nil, Config{}, fmt.Errorf("caravan driver is not configured yet")
	}
	return d.node, d.config, nil
}

func configEqual(a, b Config) bool {
	same := a.GPUBackend == b.GPUBackend && *a.MPS == *b.MPS && a.MPSBinary == b.MPSBinary &&
		a.StateDir == b.StateDir && a.CheckpointRoot == b.CheckpointRoot &&
		a.ConsulAddress == b.ConsulAddress && a.ConsulToken == b.ConsulToken
	if !same || !reflect.DeepEqual(a.IsolationConfig, b.IsolationConfig) ||
		(a.SimulatedGPUs == nil) != (b.SimulatedGPUs == nil) {
		return false
	}
	return a.SimulatedGPUs == nil || *a.SimulatedGPUs == *b.SimulatedGPUs
}
