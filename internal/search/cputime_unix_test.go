//go:build unix

package search

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds cpu-ms/op (this process and its waited-for children, user
// plus system) to b: on a shared machine it is steadier than wall time.
// Call it after the loop with the value start returned before it.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
