package aggsvc

import (
	"syscall"
	"time"
)

// threadCPU is the calling OS thread's CPU time (pool goroutines are locked
// to their threads, so deltas are exactly the summation work).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
