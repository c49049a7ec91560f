//go:build unix

package pipeline

import "syscall"

// processCPU returns the CPU time (user + system) this process has used, in
// nanoseconds; ok is false when the OS does not say.
func processCPU() (ns int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
