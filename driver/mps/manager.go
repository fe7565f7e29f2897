package mps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultBinary is the MPS control program of the NVIDIA driver.
const DefaultBinary = "nvidia-cuda-mps-control"

// Config configures a Manager; zero values get defaults.
type Config struct {
	// Enabled turns MPS on; a disabled manager starts nothing.
	Enabled bool
	// Binary is the control program, a name looked up in PATH or a path.
	Binary string
	// BaseDir holds <uuid>/pipe and <uuid>/log per GPU; required when enabled.
	BaseDir string
	// Runner runs the control program (default ExecRunner).
	Runner Runner
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Timeout bounds each control command (default 30s).
	Timeout time.Duration
}

// Manager runs one MPS control daemon per GPU in use, reference counted:
// the first Acquire starts it, the last Release stops it. It only starts
// and stops daemons; it never changes a GPU's compute mode or MIG setup.
type Manager struct {
	cfg  Config
	mu   sync.Mutex
	refs map[string]int
}

// New checks cfg and fills in defaults. A missing control program is not
// an error here (a node may have no GPUs to share); Check and Acquire
// report it.
func New(cfg Config) (*Manager, error) {
	if cfg.Binary == "" {
		cfg.Binary = DefaultBinary
	}
	if cfg.Runner == nil {
		cfg.Runner = ExecRunner{}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Enabled && cfg.BaseDir == "" {
		return nil, errors.New("mps: a base directory is required when MPS is enabled")
	}
	cfg.Logger = cfg.Logger.Named("mps")
	return &Manager{cfg: cfg, refs: map[string]int{}}, nil
}

// Enabled tells whether the manager runs daemons.
func (m *Manager) Enabled() bool { return m.cfg.Enabled }

// Check reports whether the control program can be found (nil when disabled).
func (m *Manager) Check() error {
	if !m.cfg.Enabled {
		return nil
	}
	_, err := m.binary()
	return err
}

func (m *Manager) binary() (string, error) {
	path, err := exec.LookPath(m.cfg.Binary)
	if err != nil {
		return "", fmt.Errorf("mps: control program %q not found (%v): install the NVIDIA driver utilities, set mps_binary, or disable mps", m.cfg.Binary, err)
	}
	return path, nil
}

// PipeDir is where the daemon for uuid keeps its pipes ("" when disabled).
func (m *Manager) PipeDir(uuid string) string {
	if !m.cfg.Enabled {
		return ""
	}
	return filepath.Join(m.cfg.BaseDir, uuid, "pipe")
}

func (m *Manager) logDir(uuid string) string {
	return filepath.Join(m.cfg.BaseDir, uuid, "log")
}

// Refs is the number of holders of uuid's daemon.
func (m *Manager) Refs(uuid string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refs[uuid]
}

// Acquire takes a reference on uuid's daemon, starting it on the first
// one, and returns the pipe directory clients must use ("" when disabled).
func (m *Manager) Acquire(uuid string) (string, error) {
	if !m.cfg.Enabled {
		return "", nil
	}
	if err := checkUUID(uuid); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refs[uuid] > 0 {
		m.refs[uuid]++
		return m.PipeDir(uuid), nil
	}
	if err := m.start(uuid); err != nil {
		return "", err
	}
	m.refs[uuid] = 1
	return m.PipeDir(uuid), nil
}

func (m *Manager) start(uuid string) error {
	bin, err := m.binary()
	if err != nil {
		return err
	}
	for _, dir := range []string{m.PipeDir(uuid), m.logDir(uuid)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("mps: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.Timeout)
	defer cancel()
	if err := m.cfg.Runner.Run(ctx, m.env(uuid), "", bin, "-d"); err != nil {
		return fmt.Errorf("mps: start the control daemon for GPU %s: %w", uuid, err)
	}
	m.cfg.Logger.Info("started MPS control daemon", "gpu", uuid, "pipe_dir", m.PipeDir(uuid))
	return nil
}

// Release drops a reference on uuid's daemon and stops the daemon with
// the last one. Releasing a GPU with no references is a no-op.
func (m *Manager) Release(uuid string) error {
	if !m.cfg.Enabled {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch n := m.refs[uuid]; {
	case n == 0:
		return nil
	case n > 1:
		m.refs[uuid] = n - 1
		return nil
	}
	// The reference is gone whether or not quit works: a daemon that
	// cannot be told to quit is most likely not running any more.
	delete(m.refs, uuid)
	return m.stop(uuid)
}

func (m *Manager) stop(uuid string) error {
	bin, err := m.binary()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.Timeout)
	defer cancel()
	if err := m.cfg.Runner.Run(ctx, m.env(uuid), "quit\n", bin); err != nil {
		m.cfg.Logger.Warn("failed to stop MPS control daemon", "gpu", uuid, "error", err)
		return fmt.Errorf("mps: stop the control daemon for GPU %s: %w", uuid, err)
	}
	m.cfg.Logger.Info("stopped MPS control daemon", "gpu", uuid)
	return nil
}

// Adopt counts a reference held by a task recovered after a plugin
// restart. Its daemon is already running, so nothing is started.
func (m *Manager) Adopt(uuid string) error {
	if !m.cfg.Enabled {
		return nil
	}
	if err := checkUUID(uuid); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refs[uuid]++
	if _, err := os.Stat(filepath.Join(m.PipeDir(uuid), "control")); err != nil {
		m.cfg.Logger.Warn("adopted MPS daemon has no control pipe", "gpu", uuid, "error", err)
	}
	return nil
}

// env is what both the daemon and the quit command need to find each other.
func (m *Manager) env(uuid string) []string {
	return []string{
		"CUDA_VISIBLE_DEVICES=" + uuid,
		"CUDA_MPS_PIPE_DIRECTORY=" + m.PipeDir(uuid),
		"CUDA_MPS_LOG_DIRECTORY=" + m.logDir(uuid),
	}
}

var uuidPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// checkUUID keeps a GPU UUID usable as a directory name under BaseDir.
func checkUUID(uuid string) error {
	if !uuidPattern.MatchString(uuid) {
		return fmt.Errorf("mps: %q is not a usable GPU UUID", uuid)
	}
	return nil
}
