//go:build unix

package watch

import (
	"syscall"
	"time"
)

// cpuTime is the user+system CPU time of this process so far: on a loaded
// machine it says more about a walk's cost than wall-clock time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
