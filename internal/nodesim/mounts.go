package nodesim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// mountInfoEnv is gopsutil's override of the mount table it reads
// (the dirname of its value holds "mountinfo").
const mountInfoEnv = "HOST_PROC_MOUNTINFO"

// narrowMounts points the process's host disk statistics at a mount table
// of one line, the filesystem that holds dir, written to dir/proc.
//
// Why: a Nomad client collects host statistics, the disk usage of every
// mount included, each time its allocation garbage collector is woken,
// and it is woken by every allocation update and every ended allocation.
// A thousand simulated clients in one process re-read the host's mount
// table (and statfs each mount) tens of times a second: half of the
// simulator's CPU in a 1,000-node run. The simulated nodes' disk
// statistics mean nothing, so one filesystem is enough. A value already
// in the environment that names a file is left alone (and "" returned);
// on any error the host's table stays in use (slower, not wrong). The
// set's Shutdown unsets the variable it set (restoreMounts).
func narrowMounts(dir string) (string, error) {
	if v := os.Getenv(mountInfoEnv); v != "" {
		if _, err := os.Stat(v); err == nil {
			return "", nil
		}
	}
	table, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	line, err := mountOf(string(table), dir)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "proc", "mountinfo")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, []byte(line+"\n"), 0o644); err != nil {
		return "", err
	}
	return file, os.Setenv(mountInfoEnv, file)
}

// mountOf is the line of a mountinfo table whose mount point is the
// longest that holds dir.
func mountOf(table, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	best, bestLen := "", -1
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := f[4] // mount ID, parent ID, major:minor, root, mount point, ...
		if within(abs, mp) && len(mp) > bestLen {
			best, bestLen = line, len(mp)
		}
	}
	if best == "" {
		return "", fmt.Errorf("no mount holds %s", abs)
	}
	return best, nil
}

// within reports whether path is mount point mp or below it.
func within(path, mp string) bool {
	return mp == "/" || path == mp || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")
}

// restoreMounts unsets the override narrowMounts set to file, unless
// something else has replaced it since.
func restoreMounts(file string) {
	if file != "" && os.Getenv(mountInfoEnv) == file {
		_ = os.Unsetenv(mountInfoEnv)
	}
}
