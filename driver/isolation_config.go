package driver

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/nomad/plugins/shared/hclspec"
)

// IsolationConfig is the part of the plugin config that confines tasks.
// The zero value, defaulted, is the safe mode: a chroot built from
// ChrootEnv, private PID and IPC namespaces, user nobody, root refused.
type IsolationConfig struct {
	// NoIsolation runs tasks on the host filesystem and namespaces, as
	// raw_exec does, for hosts that cannot isolate. Loudly reported.
	NoIsolation bool `codec:"no_isolation"`
	// ChrootEnv maps host paths to paths in the task's chroot; each is
	// bound read-only. Default DefaultChrootEnv.
	ChrootEnv map[string]string `codec:"chroot_env"`
	// DefaultUser runs tasks that set no user. Default "nobody".
	DefaultUser string `codec:"default_user"`
	// AllowRoot lets tasks run as uid 0. Default false.
	AllowRoot bool `codec:"allow_root"`
	// DeniedUsers may never run tasks, whatever AllowRoot says.
	DeniedUsers []string `codec:"denied_users"`
	// DeviceDir holds the host's /dev/nvidia* nodes. Default "/dev".
	DeviceDir string `codec:"device_dir"`
	// GPULibraryDirs are bound read-only into every GPU task's chroot at
	// the same path, for driver libraries outside ChrootEnv (for example
	// /usr/local/nvidia/lib64). Default: the directories holding
	// libcuda.so.1 and libnvidia-ml.so.1, when ChrootEnv does not cover them.
	GPULibraryDirs []string `codec:"gpu_library_dirs"`

	// NomadAddress and NomadToken read a job's create index, which keys
	// its checkpoints to one run of the job. Defaults NOMAD_ADDR and
	// NOMAD_TOKEN, then http://127.0.0.1:4646. The token needs read-job.
	NomadAddress string `codec:"nomad_address"`
	NomadToken   string `codec:"nomad_token"`
	// CheckpointRetention is how long a checkpoint directory no task is
	// using is kept after its last write (or its run finished). Default 168h.
	CheckpointRetention string `codec:"checkpoint_retention"`
}

// DefaultChrootEnv is what a task sees of the host: Nomad's exec default,
// which on Debian/Ubuntu holds /usr/bin/python3, the Python packages in
// /usr/lib/python3/dist-packages (python3-torch, numpy, sklearn), BLAS
// through /etc/alternatives, CA certificates and the NVIDIA userspace
// libraries a distribution package installs under /usr/lib; plus
// /opt/caravan/workloads, where Caravan's jobspecs expect their code.
var DefaultChrootEnv = map[string]string{
	"/bin":                 "/bin",
	"/etc":                 "/etc",
	"/lib":                 "/lib",
	"/lib32":               "/lib32",
	"/lib64":               "/lib64",
	"/sbin":                "/sbin",
	"/usr":                 "/usr",
	"/run/resolvconf":      "/run/resolvconf",
	"/run/systemd/resolve": "/run/systemd/resolve",

	"/opt/caravan/workloads": "/opt/caravan/workloads",
}

// defaultCheckpointRetention keeps an idle checkpoint for a week.
const defaultCheckpointRetention = 7 * 24 * time.Hour

// reservedTaskPaths are mounted by the executor or caravan itself; a
// chroot_env entry there would hide them.
var reservedTaskPaths = []string{"/", "/alloc", "/local", "/secrets", "/private", "/tmp", "/dev", "/proc", "/sys", "/caravan"}

var isolationSpec = map[string]*hclspec.Spec{
	"no_isolation":         hclspec.NewAttr("no_isolation", "bool", false),
	"chroot_env":           hclspec.NewBlockAttrs("chroot_env", "string", false),
	"default_user":         hclspec.NewAttr("default_user", "string", false),
	"allow_root":           hclspec.NewAttr("allow_root", "bool", false),
	"denied_users":         hclspec.NewAttr("denied_users", "list(string)", false),
	"device_dir":           hclspec.NewAttr("device_dir", "string", false),
	"gpu_library_dirs":     hclspec.NewAttr("gpu_library_dirs", "list(string)", false),
	"nomad_address":        hclspec.NewAttr("nomad_address", "string", false),
	"nomad_token":          hclspec.NewAttr("nomad_token", "string", false),
	"checkpoint_retention": hclspec.NewAttr("checkpoint_retention", "string", false),
}

// init adds the isolation keys to the plugin block's schema, so they live
// beside the struct that holds them.
func init() {
	maps.Copy(configSpec.GetObject().Attributes, isolationSpec)
}

func (c IsolationConfig) withDefaults() IsolationConfig {
	if len(c.ChrootEnv) == 0 {
		c.ChrootEnv = maps.Clone(DefaultChrootEnv)
	}
	if c.DefaultUser == "" {
		c.DefaultUser = "nobody"
	}
	if c.DeviceDir == "" {
		c.DeviceDir = "/dev"
	}
	if c.CheckpointRetention == "" {
		c.CheckpointRetention = defaultCheckpointRetention.String()
	}
	return c
}

// validate checks a defaulted IsolationConfig, naming the field.
func (c IsolationConfig) validate() error {
	var errs []error
	for host, task := range c.ChrootEnv {
		if err := validChrootEntry(host, task); err != nil {
			errs = append(errs, err)
		}
	}
	if strings.TrimSpace(c.DefaultUser) == "" {
		errs = append(errs, errors.New("default_user: must not be empty"))
	}
	for i, u := range c.DeniedUsers {
		if strings.TrimSpace(u) == "" {
			errs = append(errs, fmt.Errorf("denied_users[%d]: must not be empty", i))
		}
	}
	if slices.Contains(c.DeniedUsers, c.DefaultUser) {
		errs = append(errs, fmt.Errorf("default_user: %q is in denied_users", c.DefaultUser))
	}
	if !filepath.IsAbs(c.DeviceDir) {
		errs = append(errs, fmt.Errorf("device_dir: %q must be an absolute path", c.DeviceDir))
	}
	for i, d := range c.GPULibraryDirs {
		if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
			errs = append(errs, fmt.Errorf("gpu_library_dirs[%d]: %q must be an absolute path other than /", i, d))
		}
	}
	if _, err := c.retention(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func validChrootEntry(host, task string) error {
	if !filepath.IsAbs(host) {
		return fmt.Errorf("chroot_env: host path %q must be absolute", host)
	}
	if !filepath.IsAbs(task) {
		return fmt.Errorf("chroot_env: task path %q (for %q) must be absolute", task, host)
	}
	clean := filepath.Clean(task)
	for _, r := range reservedTaskPaths {
		if clean == r || (r != "/" && strings.HasPrefix(clean, r+"/")) {
			return fmt.Errorf("chroot_env: task path %q is reserved (the task's own %s)", task, r)
		}
	}
	return nil
}

// retention parses CheckpointRetention.
func (c IsolationConfig) retention() (time.Duration, error) {
	d, err := time.ParseDuration(c.CheckpointRetention)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("checkpoint_retention: %q must be a duration such as \"168h\" (0 or more)", c.CheckpointRetention)
	}
	return d, nil
}
