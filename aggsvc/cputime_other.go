//go:build !linux

package aggsvc

import "time"

var cpuEpoch = time.Now()

// threadCPU falls back to wall time where no per-thread clock is available.
func threadCPU() time.Duration { return time.Since(cpuEpoch) }
