package taskspec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Config is a caravan task's config, every number as its text ("" =
// unset): HCL numbers reach the driver as strings (see driver.TaskConfig)
// and the scheduler as JSON numbers, which FromJob turns into text.
type Config struct {
	Command      string
	Args         []string
	GPUs         string
	GPUFraction  string
	GPUMemory    string
	GPUUUIDs     []string
	RemoteMemory string
	Aggregator   string
	// Memshare: a donor lends its reserved-but-unused memory (memory_donor,
	// or up to donate_memory); remote_memory_mode is "block" or "swap".
	MemoryDonor      bool
	DonateMemory     string
	RemoteMemoryMode string
}

// Request is a valid config's GPU ask.
type Request struct {
	Whole    int     // whole GPUs; 0 if fractional or none
	Fraction float64 // share of one GPU; 0 if whole or none
	MemMiB   uint64  // GPU memory cap; 0 means proportional to Fraction
	UUIDs    []string
}

// None reports a task that asks for no GPU.
func (r Request) None() bool { return r.Whole == 0 && r.Fraction == 0 }

// MaxWholeGPUs bounds gpus so a typo cannot ask for millions.
const MaxWholeGPUs = 1024

// Parse validates the config and returns its GPU request; it reports every
// bad field at once.
func (c Config) Parse() (Request, error) {
	var req Request
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if strings.TrimSpace(c.Command) == "" {
		add(errors.New("command: must not be empty"))
	}
	add(c.parseCount(&req))
	add(c.parseMemory(&req))
	add(c.parseUUIDs(&req))
	if c.RemoteMemory != "" {
		if _, err := ParseMiB(c.RemoteMemory); err != nil {
			add(fmt.Errorf("remote_memory: %v", err))
		}
	}
	add(c.parseMemshare())
	if c.Aggregator != "" && !validServiceName(c.Aggregator) {
		add(fmt.Errorf("aggregator: %q is not a valid Consul service name (letters, digits, dashes)", c.Aggregator))
	}
	return req, errors.Join(errs...)
}

// parseMemshare checks the remote-memory fields.
func (c Config) parseMemshare() error {
	var errs []error
	if c.DonateMemory != "" {
		if _, err := ParseMiB(c.DonateMemory); err != nil {
			errs = append(errs, fmt.Errorf("donate_memory: %v", err))
		}
	}
	switch c.RemoteMemoryMode {
	case "", "block", "swap":
		if c.RemoteMemoryMode != "" && c.RemoteMemory == "" {
			errs = append(errs, errors.New("remote_memory_mode: only applies with remote_memory"))
		}
	default:
		errs = append(errs, fmt.Errorf("remote_memory_mode: %q is not \"block\" or \"swap\"", c.RemoteMemoryMode))
	}
	if c.RemoteMemory != "" && (c.MemoryDonor || c.DonateMemory != "") {
		errs = append(errs, errors.New("remote_memory and memory_donor/donate_memory: a task borrows or lends memory, not both"))
	}
	return errors.Join(errs...)
}

func (c Config) parseCount(req *Request) error {
	gpus, fraction := strings.TrimSpace(c.GPUs), strings.TrimSpace(c.GPUFraction)
	if gpus != "" && fraction != "" {
		return fmt.Errorf("gpus and gpu_fraction: set one or the other, not both (gpus = %q, gpu_fraction = %q)", gpus, fraction)
	}
	if gpus != "" {
		g, err := strconv.ParseFloat(gpus, 64)
		if err != nil || g < 0 || g != math.Trunc(g) || g > MaxWholeGPUs {
			return fmt.Errorf("gpus: %q must be a whole number from 0 to %d", gpus, MaxWholeGPUs)
		}
		req.Whole = int(g)
	}
	if fraction != "" {
		f, err := strconv.ParseFloat(fraction, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return fmt.Errorf("gpu_fraction: %q must be a number greater than 0 and at most 1", fraction)
		}
		req.Fraction = f
	}
	return nil
}

func (c Config) parseMemory(req *Request) error {
	if c.GPUMemory == "" {
		return nil
	}
	if strings.TrimSpace(c.GPUFraction) == "" {
		return errors.New("gpu_memory: only applies with gpu_fraction (whole GPUs get all their memory)")
	}
	mib, err := ParseMiB(c.GPUMemory)
	if err != nil {
		return fmt.Errorf("gpu_memory: %v", err)
	}
	req.MemMiB = mib
	return nil
}

func (c Config) parseUUIDs(req *Request) error {
	if len(c.GPUUUIDs) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for _, u := range c.GPUUUIDs {
		u = strings.TrimSpace(u)
		if u == "" {
			return errors.New("gpu_uuids: entries must not be empty")
		}
		if seen[u] {
			return fmt.Errorf("gpu_uuids: %q is listed twice", u)
		}
		seen[u] = true
		req.UUIDs = append(req.UUIDs, u)
	}
	switch {
	case req.Fraction > 0 && len(req.UUIDs) != 1:
		return fmt.Errorf("gpu_uuids: a gpu_fraction task runs on one GPU, got %d UUIDs", len(req.UUIDs))
	case req.Whole > 0 && len(req.UUIDs) != req.Whole:
		return fmt.Errorf("gpu_uuids: %d UUIDs listed but gpus = %d", len(req.UUIDs), req.Whole)
	case req.None():
		return errors.New("gpu_uuids: set gpus or gpu_fraction to say how much of the pinned GPUs to use")
	}
	return nil
}

// validServiceName follows Consul's DNS-compatible service naming.
func validServiceName(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
