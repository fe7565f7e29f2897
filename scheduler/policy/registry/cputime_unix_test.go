//go:build unix

package registry

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, so the benchmark can
// report work per decision even when other processes share the cores.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
