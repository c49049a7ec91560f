//go:build unix

package resultstest

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system) the process has used so
// far, for the benchmarks that report CPU per row (scripts/bench.sh).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
