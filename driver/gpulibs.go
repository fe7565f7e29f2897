package driver

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// driverLibraries are the NVIDIA userspace libraries CUDA programs load;
// their directories must be visible, read-only, in a GPU task's chroot.
var driverLibraries = []string{"libcuda.so.1", "libnvidia-ml.so.1"}

// gpuLibraryDirs are the extra read-only binds GPU tasks get: the
// configured gpu_library_dirs, or the directories the dynamic linker finds
// the driver libraries in that chroot_env does not already show at the
// same path (a distribution's /usr/lib/x86_64-linux-gnu is covered by /usr).
func gpuLibraryDirs(c IsolationConfig) []string {
	if len(c.GPULibraryDirs) > 0 {
		return c.GPULibraryDirs
	}
	var out []string
	for _, dir := range ldconfigDirs(driverLibraries) {
		if !coveredByChroot(dir, c.ChrootEnv) && !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}

// ldconfigDirs asks the linker cache (ldconfig -p) where libs live.
func ldconfigDirs(libs []string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ldconfig", "-p").Output()
	if err != nil {
		return nil
	}
	return parseLdconfig(string(out), libs)
}

// parseLdconfig reads lines like
// "	libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1".
func parseLdconfig(out string, libs []string) []string {
	var dirs []string
	for _, line := range strings.Split(out, "\n") {
		name, path, ok := strings.Cut(strings.TrimSpace(line), " => ")
		if !ok || !slices.Contains(libs, strings.Fields(name + " x")[0]) || !filepath.IsAbs(path) {
			continue
		}
		if d := filepath.Dir(path); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// coveredByChroot says whether dir shows at the same path in the chroot.
func coveredByChroot(dir string, env map[string]string) bool {
	for host, task := range env {
		if filepath.Clean(host) != filepath.Clean(task) {
			continue
		}
		if rel, err := filepath.Rel(host, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}
