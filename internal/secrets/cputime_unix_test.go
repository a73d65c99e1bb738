//go:build unix

package secrets

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used (all threads).
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
