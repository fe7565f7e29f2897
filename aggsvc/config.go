package aggsvc

import (
	"crypto/tls"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// Config shapes a Server. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Key signs job and admin tokens; required (at least 16 bytes).
	Key []byte
	// Cores is the size of the summation pool shared by all jobs.
	Cores int
	// MaxFrameBytes bounds a frame body; larger frames are rejected before
	// they are read. It also bounds a partition.
	MaxFrameBytes int
	// MaxJobBytes bounds the memory one job may hold in accumulators and
	// queued pushes; pushes beyond it fail with CodeOverLimit.
	MaxJobBytes int64
	// MaxJobs bounds the number of registered jobs.
	MaxJobs int
	// StepTimeout fails a partition that not every worker has pushed in time.
	StepTimeout time.Duration
	// JobIdleTimeout unregisters a job that has had no connection this long.
	JobIdleTimeout time.Duration
	// HandshakeTimeout bounds the wait for a connection's first frame.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds writing one frame to a slow reader.
	WriteTimeout time.Duration
	// TLS, when set, wraps every connection.
	TLS *tls.Config
	// Registry receives the metrics; a fresh one when nil.
	Registry *prometheus.Registry
	Logger   hclog.Logger
}

// DefaultConfig returns the defaults (Key left empty).
func DefaultConfig() Config {
	return Config{
		Cores:            max(1, runtime.NumCPU()/2),
		MaxFrameBytes:    4<<20 + 64,
		MaxJobBytes:      512 << 20,
		MaxJobs:          256,
		StepTimeout:      30 * time.Second,
		JobIdleTimeout:   5 * time.Minute,
		HandshakeTimeout: 10 * time.Second,
		WriteTimeout:     30 * time.Second,
	}
}

func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if len(c.Key) < 16 {
		return c, errors.New("aggsvc: key: need at least 16 bytes to sign job tokens")
	}
	if c.Cores <= 0 {
		c.Cores = d.Cores
	}
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = d.MaxFrameBytes
	}
	if c.MaxFrameBytes < pushHeaderSize+4 {
		return c, fmt.Errorf("aggsvc: max_frame_bytes: %d is too small", c.MaxFrameBytes)
	}
	if c.MaxJobBytes <= 0 {
		c.MaxJobBytes = d.MaxJobBytes
	}
	if c.MaxJobs <= 0 {
		c.MaxJobs = d.MaxJobs
	}
	if c.StepTimeout <= 0 {
		c.StepTimeout = d.StepTimeout
	}
	if c.JobIdleTimeout <= 0 {
		c.JobIdleTimeout = d.JobIdleTimeout
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = d.HandshakeTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c, nil
}

// MaxPartitionElems is how many elements of type t fit one frame.
func (c Config) MaxPartitionElems(t DType) int {
	return (c.MaxFrameBytes - pushHeaderSize) / t.Size()
}
