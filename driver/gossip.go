package driver

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/caravan-dl/caravan/driver/taskspec"
	"github.com/caravan-dl/caravan/gossip"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"
	"github.com/prometheus/client_golang/prometheus"
)

// GossipConfig is the plugin config's gossip block; absent, gossip is
// off. The driver process runs the member, so nothing new is deployed.
//
//	gossip {
//	  node_name           = "gpu-17"            # default: hostname
//	  bind                = "0.0.0.0:7946"
//	  advertise           = "10.0.0.17:7946"
//	  join                = ["10.0.0.1:7946"]
//	  consul_service      = "caravan-gossip"    # and/or join through Consul
//	  encryption_key_file = "/etc/caravan/gossip.keys"
//	  probe_interval      = "1m"
//	  probe_peers         = 3
//	  probe_bytes         = "1MiB"
//	  probe_share         = 0.01
//	  publish_interval    = "5s"
//	}
type GossipConfig struct {
	NodeName          string   `codec:"node_name"`
	Bind              string   `codec:"bind"`
	Advertise         string   `codec:"advertise"`
	Join              []string `codec:"join"`
	ConsulService     string   `codec:"consul_service"`
	EncryptionKeyFile string   `codec:"encryption_key_file"`
	ProbePort         int64    `codec:"probe_port"`
	ProbeInterval     string   `codec:"probe_interval"`
	ProbePeers        int64    `codec:"probe_peers"`
	ProbeBytes        string   `codec:"probe_bytes"`
	ProbeShare        float64  `codec:"probe_share"`
	PublishInterval   string   `codec:"publish_interval"`
}

var gossipSpec = hclspec.NewBlock("gossip", false, hclspec.NewObject(map[string]*hclspec.Spec{
	"node_name":           hclspec.NewAttr("node_name", "string", false),
	"bind":                hclspec.NewAttr("bind", "string", false),
	"advertise":           hclspec.NewAttr("advertise", "string", false),
	"join":                hclspec.NewAttr("join", "list(string)", false),
	"consul_service":      hclspec.NewAttr("consul_service", "string", false),
	"encryption_key_file": hclspec.NewAttr("encryption_key_file", "string", false),
	"probe_port":          hclspec.NewAttr("probe_port", "number", false),
	"probe_interval":      hclspec.NewAttr("probe_interval", "string", false),
	"probe_peers":         hclspec.NewAttr("probe_peers", "number", false),
	"probe_bytes":         hclspec.NewAttr("probe_bytes", "string", false),
	"probe_share":         hclspec.NewAttr("probe_share", "number", false),
	"publish_interval":    hclspec.NewAttr("publish_interval", "string", false),
}))

func init() { configSpec.GetObject().Attributes["gossip"] = gossipSpec }

// memberConfig turns the block into a gossip.Config, naming bad fields.
func (g *GossipConfig) memberConfig(consulAddr, consulToken string) (*gossip.Config, time.Duration, error) {
	c := gossip.DefaultConfig(g.NodeName)
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf("gossip."+format, a...)) }
	if g.Bind != "" {
		host, port, err := splitHostPort(g.Bind)
		if err != nil {
			add("bind: %v", err)
		}
		c.BindAddr, c.BindPort = host, port
	}
	if g.Advertise != "" {
		host, port, err := splitHostPort(g.Advertise)
		if err != nil {
			add("advertise: %v", err)
		}
		c.AdvertiseAddr, c.AdvertisePort = host, port
	}
	c.Join, c.ConsulService = g.Join, g.ConsulService
	c.ConsulAddress, c.ConsulToken = consulAddr, consulToken
	if g.EncryptionKeyFile == "" {
		add("encryption_key_file: required (gossip is encrypted; see gossip/README.md to make a key)")
	} else if keys, err := gossip.LoadKeyFile(g.EncryptionKeyFile); err != nil {
		add("%v", err)
	} else {
		c.Keys = keys
	}
	if g.ProbePort != 0 {
		c.Probe.Port = int(g.ProbePort)
	}
	if g.ProbePeers != 0 {
		c.Probe.Peers = int(g.ProbePeers)
	}
	if g.ProbeShare != 0 {
		c.Probe.Share = g.ProbeShare
	}
	durField(&c.Probe.Interval, g.ProbeInterval, "probe_interval", add)
	publish := 5 * time.Second
	durField(&publish, g.PublishInterval, "publish_interval", add)
	if g.ProbeBytes != "" {
		if mib, err := taskspec.ParseMiB(g.ProbeBytes); err != nil {
			add("probe_bytes: %v", err)
		} else {
			c.Probe.Bytes = int64(mib) << 20
			c.Probe.MinBytes = min(c.Probe.MinBytes, c.Probe.Bytes)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, 0, err
	}
	if err := c.Validate(); err != nil {
		return nil, 0, fmt.Errorf("gossip: %w", err)
	}
	return c, publish, nil
}

func durField(dst *time.Duration, s, name string, add func(string, ...any)) {
	if s == "" {
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		add("%s: %q is not a positive duration", name, s)
		return
	}
	*dst = d
}

func splitHostPort(s string) (string, int, error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q out of range", p)
	}
	return host, port, nil
}

// gossipNode is the driver's member and its publishing loop.
type gossipNode struct {
	mu     sync.Mutex
	raw    *GossipConfig
	member *gossip.Member
	stop   chan struct{}
	done   chan struct{}
}

// configure starts (or restarts, when the block changed) the member.
func (g *gossipNode) configure(raw *GossipConfig, d *Driver, conf Config) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if reflect.DeepEqual(raw, g.raw) {
		return nil
	}
	if raw == nil {
		g.stopLocked()
		return nil
	}
	mc, publish, err := raw.memberConfig(conf.ConsulAddress, conf.ConsulToken)
	if err != nil {
		return err
	}
	mc.Logger = d.logger
	mc.Registry = prometheus.NewRegistry()
	g.stopLocked()
	m, err := gossip.New(mc)
	if err != nil {
		return err
	}
	g.raw, g.member = raw, m
	g.stop, g.done = make(chan struct{}), make(chan struct{})
	go g.publishLoop(d, m, publish, g.stop, g.done)
	return nil
}

func (g *gossipNode) stopLocked() {
	if g.member == nil {
		return
	}
	close(g.stop)
	<-g.done
	_ = g.member.Leave(time.Second)
	_ = g.member.Shutdown()
	g.member, g.raw = nil, nil
}

func (g *gossipNode) shutdown() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopLocked()
}

func (g *gossipNode) publishLoop(d *Driver, m *gossip.Member, every time.Duration, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := m.SetResources(d.gossipResources()); err != nil {
			d.logger.Warn("gossip: publishing resources", "error", err)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		case <-d.changed.wait():
		}
	}
}

// gossipResources reads node memory, donor budget and the GPU ledger.
func (d *Driver) gossipResources() gossip.Resources {
	var r gossip.Resources
	if total, used, err := gossip.ReadMemInfo(""); err == nil {
		r.MemTotalBytes, r.MemUsedBytes = total, used
	}
	d.mem.mu.Lock()
	if b := d.mem.budget; b != nil {
		r.MemDonatableBytes = uint64(max(b.capacity(), 0))
	}
	d.mem.mu.Unlock()
	if node, _, err := d.gpus(); err == nil && node.ledger != nil {
		for _, u := range node.ledger.Usage() {
			r.GPUs = append(r.GPUs, gossip.GPU{Index: u.Index, UUID: u.UUID, TotalMiB: u.TotalMiB,
				UsedFraction: u.UsedFraction, UsedMiB: u.UsedMiB})
		}
	}
	return r
}
