// Package donor serves a node's donated memory: fixed-size slabs leased to
// consumers over NBD, with a small authenticated HTTP lease API. Leases
// expire unless renewed; when the donatable memory shrinks (a donor task
// grows back) the donor stops granting, asks consumers to move slabs away,
// and finally frees them.
package donor

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults.
const (
	DefaultSlabSize     = 64 << 20
	DefaultLeaseTTL     = 30 * time.Second
	DefaultReclaimGrace = 20 * time.Second
	DefaultSweep        = time.Second
	minSlabSize         = 64 << 10
)

// Config configures a donor. Key and one of Capacity/CapacityBytes are
// required; the rest have defaults.
type Config struct {
	Node string
	// Key is the cluster's shared secret: it signs lease tokens and derives
	// the lease API's bearer token.
	Key      []byte
	SlabSize uint64
	// Capacity reports the bytes this node may lend right now (the driver
	// measures donor tasks); CapacityBytes is a fixed alternative.
	Capacity      func() int64
	CapacityBytes int64
	LeaseTTL      time.Duration
	// ReclaimGrace is how long a consumer has to move a reclaimed slab
	// before the donor frees it anyway (the donor task comes first).
	ReclaimGrace  time.Duration
	SweepInterval time.Duration
	// TLS enables NBD_OPT_STARTTLS and HTTPS; RequireTLS refuses plain NBD.
	TLS        *tls.Config
	RequireTLS bool
	Logger     hclog.Logger
	Registry   prometheus.Registerer
}

func (c Config) withDefaults() Config {
	if c.SlabSize == 0 {
		c.SlabSize = DefaultSlabSize
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.ReclaimGrace <= 0 {
		c.ReclaimGrace = DefaultReclaimGrace
	}
	if c.SweepInterval <= 0 {
		c.SweepInterval = DefaultSweep
	}
	if c.Capacity == nil {
		n := c.CapacityBytes
		c.Capacity = func() int64 { return n }
	}
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
	if len(c.Key) < memshare.MinKeyLen {
		errs = append(errs, fmt.Errorf("key: need at least %d bytes", memshare.MinKeyLen))
	}
	if c.Node == "" {
		errs = append(errs, errors.New("node: must not be empty"))
	}
	if c.SlabSize < minSlabSize || c.SlabSize%4096 != 0 || c.SlabSize > 1<<32 {
		errs = append(errs, fmt.Errorf("slab_size: %d must be a multiple of 4096 from %d to 4GiB", c.SlabSize, minSlabSize))
	}
	if c.RequireTLS && c.TLS == nil {
		errs = append(errs, errors.New("require_tls: needs a TLS config"))
	}
	return errors.Join(errs...)
}
