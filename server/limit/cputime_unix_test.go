//go:build unix

package limit_test

import (
	"syscall"
	"testing"
	"time"
)

// measureCPU reports the process's CPU time per operation, which, unlike
// ns/op, does not grow while other programs hold the processors. Call the
// function it returns when the timed loop ends.
func measureCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
