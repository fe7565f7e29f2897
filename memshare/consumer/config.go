// Package consumer is a task's local remote-memory endpoint: an NBD server
// whose address space is striped over slabs leased from several donors,
// with Reed-Solomon parity (k data + r parity slabs of each stripe on k+r
// distinct nodes) or, for comparison, an Infiniswap-style single remote
// copy written through to a local backup file.
package consumer

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// Modes of resilience.
const (
	ModeEC     = "ec"     // Reed-Solomon across donors (default)
	ModeBackup = "backup" // one remote copy + write-through local file
)

// Layouts.
const (
	LayoutSplit = "split"
	LayoutWhole = "whole"
)

// BlockSize is the unit a stripe codes: each block is cut into k pieces.
const BlockSize = 4096

// Defaults.
const (
	DefaultDataShards   = 4
	DefaultParityShards = 2
	DefaultSlabSize     = 64 << 20
	DefaultRenew        = 10 * time.Second
	DefaultIOTimeout    = 5 * time.Second
)

// Config configures a Volume.
type Config struct {
	// ID names the consumer in donors' leases (e.g. the task's alloc ID).
	ID string
	// Size of the address space in bytes (rounded up to 4 KiB).
	Size uint64
	Mode string
	// DataShards (k) and ParityShards (r) per stripe; k must divide 4096.
	// Backup mode uses k = 1, r = 0.
	DataShards, ParityShards int
	// Layout of a stripe in EC mode: LayoutSplit (default, as Hydra) cuts
	// every 4 KiB block into k pieces on k donors; LayoutWhole keeps each
	// block whole on one donor (parity over the blocks at the same slab
	// offset, as RAID 6), so a small read is one donor round trip and a
	// small write reads the row's other k-1 blocks before writing.
	Layout string
	// BackupPath is the local file of backup mode.
	BackupPath string
	// SlabSize must equal the donors' slab size.
	SlabSize uint64
	Donors   memshare.DonorSource
	Key      []byte
	// TLS, when set, is used for NBD (STARTTLS) and the lease API (HTTPS).
	TLS           *tls.Config
	RenewInterval time.Duration
	IOTimeout     time.Duration
	Logger        hclog.Logger
	Registry      prometheus.Registerer
}

func (c Config) withDefaults() Config {
	if c.Mode == "" {
		c.Mode = ModeEC
	}
	if c.Mode == ModeBackup {
		c.DataShards, c.ParityShards, c.Layout = 1, 0, LayoutSplit
	}
	if c.Layout == "" {
		c.Layout = LayoutSplit
	}
	if c.DataShards == 0 {
		c.DataShards = DefaultDataShards
	}
	if c.ParityShards == 0 && c.Mode == ModeEC {
		c.ParityShards = DefaultParityShards
	}
	if c.SlabSize == 0 {
		c.SlabSize = DefaultSlabSize
	}
	if c.RenewInterval <= 0 {
		c.RenewInterval = DefaultRenew
	}
	if c.IOTimeout <= 0 {
		c.IOTimeout = DefaultIOTimeout
	}
	c.Size = (c.Size + BlockSize - 1) / BlockSize * BlockSize
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.ID == "" {
		add("id: must not be empty")
	}
	if c.Size == 0 {
		add("size: must be greater than 0")
	}
	switch c.Mode {
	case ModeEC:
		if c.ParityShards < 1 || c.ParityShards > 8 {
			add("parity_shards: %d must be from 1 to 8", c.ParityShards)
		}
	case ModeBackup:
		if c.BackupPath == "" {
			add("backup_path: required in backup mode")
		}
	default:
		add("mode: %q is not %q or %q", c.Mode, ModeEC, ModeBackup)
	}
	if c.Layout != LayoutSplit && c.Layout != LayoutWhole {
		add("layout: %q is not %q or %q", c.Layout, LayoutSplit, LayoutWhole)
	}
	if c.DataShards < 1 || c.DataShards > 16 || BlockSize%c.DataShards != 0 {
		add("data_shards: %d must divide 4096 (1, 2, 4, 8 or 16)", c.DataShards)
	}
	if c.SlabSize < 64<<10 || c.SlabSize%BlockSize != 0 {
		add("slab_size: %d must be a multiple of 4096, at least 64KiB", c.SlabSize)
	}
	if len(c.Key) < memshare.MinKeyLen {
		add("key: need at least %d bytes", memshare.MinKeyLen)
	}
	if c.Donors == nil {
		add("donors: a donor source is required")
	}
	return errors.Join(errs...)
}
