package nodesim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/client"
	"github.com/hashicorp/nomad/client/config"
	"github.com/hashicorp/nomad/client/consul"
	"github.com/hashicorp/nomad/client/serviceregistration"
	"github.com/hashicorp/nomad/client/state"
	"github.com/hashicorp/nomad/helper/pluginutils/loader"
	"github.com/hashicorp/nomad/helper/pluginutils/singleton"
	"github.com/hashicorp/nomad/nomad/structs"
	structsc "github.com/hashicorp/nomad/nomad/structs/config"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/version"

	"github.com/caravan-dl/caravan/driver"
)

// Node is one simulated Nomad client.
type Node struct {
	Name   string
	Client *client.Client
}

// startNode starts client i: a real Nomad client (registration,
// heartbeats, allocation sync with the servers) whose only driver is the
// caravan driver, loaded in process with simulated GPUs so its fingerprint
// is the real one, and whose allocations are run by the simulated runner.
func startNode(cfg Config, i int) (*Node, error) {
	name := fmt.Sprintf("%s-%d", cfg.Prefix, i)
	dir := filepath.Join(cfg.Dir, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("nodesim: %w", err)
	}
	logger := cfg.Logger.Named(name)
	cc, err := clientConfig(cfg, name, dir, logger)
	if err != nil {
		return nil, err
	}
	c, err := client.NewClient(cc, noopCatalog{}, func(string) consul.SupportedProxiesAPI { return noopProxies{} }, noopServices{}, nil)
	if err != nil {
		return nil, fmt.Errorf("nodesim: start %s: %w", name, err)
	}
	return &Node{Name: name, Client: c}, nil
}

func clientConfig(cfg Config, name, dir string, logger hclog.Logger) (*config.Config, error) {
	cc := config.DefaultConfig()
	cc.Logger = hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: name, Level: cfg.LogLevel, Output: cfg.LogOutput})
	cc.StateDir = filepath.Join(dir, "state")
	cc.AllocDir = filepath.Join(dir, "alloc")
	cc.AllocMountsDir = filepath.Join(dir, "mounts")
	cc.Servers = cfg.Servers
	cc.Region = "global"
	cc.CpuCompute = cfg.CPUMHz
	cc.MemoryMB = cfg.MemoryMB
	cc.NetworkSpeed = 1000
	cc.MaxKillTimeout = time.Minute
	cc.Node = nodeStruct(cfg, name)
	cc.Options = map[string]string{"fingerprint.denylist": "env_aws,env_gce,env_azure,env_digitalocean"}
	cc.Version = &version.VersionInfo{Version: version.Version}
	cc.ConsulConfigs = map[string]*structsc.ConsulConfig{structs.ConsulDefaultCluster: structsc.DefaultConsulConfig()}
	cc.VaultConfigs = map[string]*structsc.VaultConfig{structs.VaultDefaultCluster: {Enabled: boolPtr(false)}}
	cc.TLSConfig = &structsc.TLSConfig{}
	cc.StatsCollectionInterval = time.Minute
	cc.GCInterval = time.Hour
	cc.GCMaxAllocs = 10_000
	cc.NoHostUUID = true
	cc.DisableRemoteExec = true
	cc.StateDBFactory = state.GetStateDBFactory(true) // in memory: a simulated node starts empty
	cc.NomadServiceDiscovery = true
	cc.APIListenerRegistrar = config.NoopAPIListenerRegistrar{}
	cc.AllocRunnerFactory = newRunner
	pl, err := pluginLoader(cfg, dir, cc.Logger)
	if err != nil {
		return nil, err
	}
	cc.PluginLoader = pl
	cc.PluginSingletonLoader = singleton.NewSingletonLoader(cc.Logger, pl)
	cc.Node.Canonicalize()
	return cc, nil
}

// nodeStruct is what the node registers: CPU and memory, a loopback
// network, and meta that marks it simulated.
func nodeStruct(cfg Config, name string) *structs.Node {
	return &structs.Node{
		Datacenter: cfg.Datacenter,
		Name:       name,
		NodePool:   cfg.NodePool,
		HTTPAddr:   "127.0.0.1:4646",
		Attributes: map[string]string{},
		Meta:       map[string]string{"caravan.nodesim": "true"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.LegacyNodeCpuResources{CpuShares: int64(cfg.CPUMHz)},
			Memory: structs.NodeMemoryResources{MemoryMB: int64(cfg.MemoryMB)},
			Disk:   structs.NodeDiskResources{DiskMB: 1_000_000},
			NodeNetworks: []*structs.NodeNetworkResource{{
				Mode: "host", Device: "lo", Speed: 1000,
				Addresses: []structs.NodeNetworkAddress{{Family: structs.NodeNetworkAF_IPv4, Alias: "default", Address: "127.0.0.1"}},
			}},
			MinDynamicPort: 20000, MaxDynamicPort: 32000,
		},
		ReservedResources:    &structs.NodeReservedResources{},
		Links:                map[string]string{},
		CSIControllerPlugins: map[string]*structs.CSIInfo{},
		CSINodePlugins:       map[string]*structs.CSIInfo{},
		HostVolumes:          map[string]*structs.ClientHostVolumeConfig{},
		HostNetworks:         map[string]*structs.ClientHostNetworkConfig{},
	}
}

// pluginLoader offers only the caravan driver, in process, configured with
// the node's simulated GPUs and its own state dir.
func pluginLoader(cfg Config, dir string, logger hclog.Logger) (loader.PluginCatalog, error) {
	id := loader.PluginID{Name: driver.PluginName, PluginType: base.PluginTypeDriver}
	pcfg := map[string]interface{}{
		"gpu_backend": "simulated",
		"simulated_gpus": []map[string]interface{}{{
			"model": cfg.GPUModel, "memory_mib": cfg.GPUMemoryMiB, "count": cfg.GPUs,
		}},
		"state_dir": filepath.Join(dir, "caravan"),
	}
	factory := func(_ context.Context, l hclog.Logger) interface{} { return driver.New(l) }
	l, err := loader.NewPluginLoader(&loader.PluginLoaderConfig{
		Logger:            logger,
		InternalPlugins:   map[loader.PluginID]*loader.InternalPluginConfig{id: {Config: pcfg, Factory: factory}},
		SupportedVersions: loader.AgentSupportedApiVersions,
	})
	if err != nil {
		return nil, fmt.Errorf("nodesim: caravan driver: %w", err)
	}
	return l, nil
}

// The Consul integration is off on simulated nodes.
type noopCatalog struct{}

func (noopCatalog) Datacenters() ([]string, error) { return nil, nil }
func (noopCatalog) Service(string, string, *consulapi.QueryOptions) ([]*consulapi.CatalogService, *consulapi.QueryMeta, error) {
	return nil, &consulapi.QueryMeta{}, nil
}

type noopProxies struct{}

func (noopProxies) Proxies() (map[string][]string, error) { return map[string][]string{}, nil }

type noopServices struct{}

func (noopServices) RegisterWorkload(*serviceregistration.WorkloadServices) error { return nil }
func (noopServices) RemoveWorkload(*serviceregistration.WorkloadServices)         {}
func (noopServices) UpdateWorkload(_, _ *serviceregistration.WorkloadServices) error {
	return nil
}
func (noopServices) AllocRegistrations(string) (*serviceregistration.AllocRegistration, error) {
	return nil, nil
}
func (noopServices) UpdateTTL(_, _, _, _ string) error { return nil }
