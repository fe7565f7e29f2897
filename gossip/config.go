package gossip

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Member. Start from DefaultConfig and change what
// differs; the zero Config is not usable.
type Config struct {
	// Name must be unique in the cluster (the Nomad node name).
	Name string
	// BindAddr/BindPort: where memberlist listens (UDP and TCP).
	BindAddr string
	BindPort int
	// AdvertiseAddr/AdvertisePort: what peers dial; empty = bind address.
	AdvertiseAddr string
	AdvertisePort int

	// Join lists host:port of members to join at start.
	Join []string
	// ConsulService, when set, registers this member in Consul under that
	// name and joins the members found there (see consul.go).
	ConsulService string
	// ConsulAddress/ConsulToken reach Consul; empty = CONSUL_HTTP_ADDR etc.
	ConsulAddress string
	ConsulToken   string

	// Keys is the keyring: Keys[0] is the primary (encrypts), all decrypt.
	// Each key is 16, 24 or 32 bytes (AES-128/192/256-GCM).
	Keys [][]byte
	// AllowInsecure runs without encryption; only for tests and demos.
	AllowInsecure bool

	// Observer members share no resources (the scheduler).
	Observer bool

	// Bandwidth probes.
	Probe ProbeConfig

	// CoordInterval is how often the local coordinate is republished.
	CoordInterval time.Duration
	// MaxMessageBytes bounds any gossip message (a push-pull of the whole
	// cluster included); larger ones are dropped with a log line.
	MaxMessageBytes int
	// MemBroadcastDelta: a change of memory used or donatable smaller
	// than this (since the last broadcast) is not broadcast; push-pull
	// carries it. 0 broadcasts every change.
	MemBroadcastDelta uint64
	// MaxLinks bounds the links a node publishes (the freshest are kept).
	MaxLinks int

	// Memberlist starts from memberlist.DefaultLANConfig(); Tune may
	// adjust it (intervals in tests and benchmarks) before it is used.
	Tune func(*memberlist.Config)

	Logger   hclog.Logger
	Registry prometheus.Registerer
}

// ProbeConfig configures bandwidth measurement.
type ProbeConfig struct {
	// Disabled turns probing off (observers never probe).
	Disabled bool
	// BindAddr/Port of the probe TCP endpoint; port 0 = gossip port + 1
	// (tests: set Port -1 for any free port).
	BindAddr string
	Port     int
	// Interval between probe rounds; Peers is how many random peers a
	// round probes.
	Interval time.Duration
	Peers    int
	// Bytes is the first probe's size; later probes aim at TargetDuration
	// from the current estimate, clamped to [MinBytes, MaxBytes].
	Bytes          int64
	MinBytes       int64
	MaxBytes       int64
	TargetDuration time.Duration
	// Share bounds the fraction of time a link carries probes, at the
	// prober and at the served end (default 0.01 = 1 %).
	Share float64
	// EWMA weight of a new sample (0..1].
	Alpha float64
	// Timeout bounds one probe.
	Timeout time.Duration
}

// DefaultConfig returns a node-agent config for a LAN, encrypted (Keys
// must still be set), probing three peers a minute at 1 % of a link.
func DefaultConfig(name string) *Config {
	h, _ := os.Hostname()
	if name == "" {
		name = h
	}
	return &Config{
		Name:              name,
		BindAddr:          "0.0.0.0",
		BindPort:          7946,
		CoordInterval:     5 * time.Second,
		MaxMessageBytes:   8 << 20,
		MaxLinks:          16,
		MemBroadcastDelta: 64 << 20,
		Probe: ProbeConfig{
			Interval:       time.Minute,
			Peers:          3,
			Bytes:          1 << 20,
			MinBytes:       256 << 10,
			MaxBytes:       256 << 20,
			TargetDuration: 250 * time.Millisecond,
			Share:          0.01,
			Alpha:          0.3,
			Timeout:        30 * time.Second,
		},
	}
}

// Validate names the first bad field.
func (c *Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("name: must be set"))
	}
	if c.BindPort < 0 || c.BindPort > 65535 {
		errs = append(errs, fmt.Errorf("bind port: %d out of range", c.BindPort))
	}
	if len(c.Keys) == 0 && !c.AllowInsecure {
		errs = append(errs, errors.New("encryption key: required (set encryption_key_file; gossip is never unencrypted in production)"))
	}
	for i, k := range c.Keys {
		if err := memberlist.ValidateKey(k); err != nil {
			errs = append(errs, fmt.Errorf("encryption key %d: %v", i, err))
		}
	}
	if c.MaxMessageBytes < 64<<10 {
		errs = append(errs, fmt.Errorf("max message bytes: %d, want ≥ 65536", c.MaxMessageBytes))
	}
	if c.CoordInterval <= 0 {
		errs = append(errs, errors.New("coord interval: must be > 0"))
	}
	errs = append(errs, c.Probe.validate())
	return errors.Join(errs...)
}

func (p ProbeConfig) validate() error {
	if p.Disabled {
		return nil
	}
	var errs []error
	if p.Interval <= 0 {
		errs = append(errs, errors.New("probe interval: must be > 0"))
	}
	if p.Peers < 1 {
		errs = append(errs, fmt.Errorf("probe peers: %d, want ≥ 1", p.Peers))
	}
	if p.MinBytes < 4096 || p.MaxBytes < p.MinBytes || p.Bytes < p.MinBytes || p.Bytes > p.MaxBytes {
		errs = append(errs, fmt.Errorf("probe bytes: want 4096 ≤ min (%d) ≤ bytes (%d) ≤ max (%d)", p.MinBytes, p.Bytes, p.MaxBytes))
	}
	if p.Share <= 0 || p.Share > 1 {
		errs = append(errs, fmt.Errorf("probe share: %g, want in (0, 1]", p.Share))
	}
	if p.Alpha <= 0 || p.Alpha > 1 {
		errs = append(errs, fmt.Errorf("probe alpha: %g, want in (0, 1]", p.Alpha))
	}
	if p.TargetDuration <= 0 || p.Timeout <= 0 {
		errs = append(errs, errors.New("probe target duration and timeout: must be > 0"))
	}
	return errors.Join(errs...)
}
