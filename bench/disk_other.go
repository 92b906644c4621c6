//go:build !linux

package bench

import (
	"syscall"
	"time"
)

// threadCPU is the process's user plus system CPU time: outside Linux
// there is no per-thread figure, so the probe's CPU includes the rest of
// the process (little, in a load generator that only probes).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
