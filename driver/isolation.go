package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/client/allocdir"
	"github.com/hashicorp/nomad/drivers/shared/executor"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// isolation is what confines one isolated task, computed before launch.
type isolation struct {
	mounts  []*drivers.MountConfig
	devices []*drivers.DeviceConfig
}

// chrootMounts binds every existing chroot_env entry read-only, parents
// before children so a nested entry lands on top of its parent's bind.
func chrootMounts(env map[string]string) []*drivers.MountConfig {
	var out []*drivers.MountConfig
	for host, task := range env {
		if _, err := os.Stat(host); err != nil {
			continue // like exec: entries missing on this host are skipped
		}
		out = append(out, &drivers.MountConfig{HostPath: host, TaskPath: filepath.Clean(task), Readonly: true})
	}
	sortMounts(out)
	return out
}

// sortMounts orders mounts by depth of their task path, then by name.
func sortMounts(ms []*drivers.MountConfig) {
	sort.SliceStable(ms, func(i, j int) bool {
		di, dj := strings.Count(ms[i].TaskPath, "/"), strings.Count(ms[j].TaskPath, "/")
		if di != dj {
			return di < dj
		}
		return ms[i].TaskPath < ms[j].TaskPath
	})
}

// buildIsolation lists the binds and device nodes of an isolated task: the
// chroot, the shared alloc dir at /alloc, its checkpoint dir, its MPS pipe
// dir, the GPU driver libraries when it has GPUs, the job's own volume
// mounts and devices, and resolv.conf when the group sets dns.
func buildIsolation(conf Config, libDirs []string, cfg *drivers.TaskConfig, paths taskPaths,
	mpsPipeDir string, gpuDevs []*drivers.DeviceConfig) (isolation, error) {
	iso := isolation{mounts: chrootMounts(conf.ChrootEnv)}
	if len(gpuDevs) > 0 {
		for _, dir := range libDirs {
			iso.mounts = append(iso.mounts, &drivers.MountConfig{HostPath: dir, TaskPath: dir, Readonly: true})
		}
	}
	iso.mounts = append(iso.mounts,
		&drivers.MountConfig{HostPath: filepath.Join(cfg.AllocDir, allocdir.SharedAllocName), TaskPath: taskAllocDir},
		&drivers.MountConfig{HostPath: paths.CheckpointDir, TaskPath: taskCheckpointDir},
	)
	if mpsPipeDir != "" {
		iso.mounts = append(iso.mounts, &drivers.MountConfig{HostPath: mpsPipeDir, TaskPath: taskMPSPipeDir})
	}
	iso.mounts = append(iso.mounts, cfg.Mounts...)
	m, err := dnsMount(cfg.TaskDir().Dir, cfg.DNS)
	if err != nil {
		return isolation{}, err
	}
	if m != nil {
		iso.mounts = append(iso.mounts, m)
	}
	iso.devices = append(append(iso.devices, gpuDevs...), cfg.Devices...)
	return iso, nil
}

// apply sets an executor command up for the isolated task.
func (iso isolation) apply(cmd *executor.ExecCommand, u taskUser) error {
	cmd.User = u.Name
	cmd.ResourceLimits = true
	cmd.ModePID = executor.IsolationModePrivate
	cmd.ModeIPC = executor.IsolationModePrivate
	cmd.Mounts = iso.mounts
	cmd.Devices = iso.devices
	resolved, err := resolveCommand(cmd.Cmd, cmd.TaskDir, iso.mounts)
	if err != nil {
		return err
	}
	cmd.Cmd = resolved
	return nil
}

// searchPath is where a bare command name is looked for in the chroot.
var searchPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// resolveCommand turns a bare name like "python3" into its path in the
// chroot: the executor's own lookup does not search bind mounts by name.
// Paths, and names found in the task dir (local/ or its root, e.g. an
// artifact), are left as they are.
func resolveCommand(name, taskDir string, mounts []*drivers.MountConfig) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range []string{filepath.Join(taskDir, allocdir.TaskLocal), taskDir} {
		if regularFile(filepath.Join(dir, name)) {
			return name, nil
		}
	}
	for _, dir := range searchPath {
		if host, ok := hostPathOf(filepath.Join(dir, name), mounts); ok && regularFile(host) {
			return filepath.Join(dir, name), nil
		}
	}
	return "", fmt.Errorf("command: %q is not in the task's local dir nor on the chroot's PATH (%s); give its full path",
		name, strings.Join(searchPath, ":"))
}

// hostPathOf maps a chroot path to the host through the deepest bind
// mount that holds it.
func hostPathOf(taskPath string, mounts []*drivers.MountConfig) (string, bool) {
	best, host := -1, ""
	for _, m := range mounts {
		rel, err := filepath.Rel(m.TaskPath, taskPath)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if d := len(m.TaskPath); d > best {
			best, host = d, filepath.Join(m.HostPath, rel)
		}
	}
	return host, best >= 0
}

func regularFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// dnsMount writes the group's dns block as the task's /etc/resolv.conf.
// Without one the task reads the host's, through the /etc bind.
func dnsMount(taskDir string, dns *drivers.DNSConfig) (*drivers.MountConfig, error) {
	if dns == nil || len(dns.Servers)+len(dns.Searches)+len(dns.Options) == 0 {
		return nil, nil
	}
	var b strings.Builder
	for _, s := range dns.Servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(dns.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(dns.Searches, " "))
	}
	if len(dns.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(dns.Options, " "))
	}
	path := filepath.Join(taskDir, "resolv.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return nil, fmt.Errorf("dns: writing resolv.conf: %w", err)
	}
	return &drivers.MountConfig{HostPath: path, TaskPath: "/etc/resolv.conf", Readonly: true}, nil
}
