//go:build !unix

package pipeline

// processCPU is unknown where getrusage is not available.
func processCPU() (ns int64, ok bool) { return 0, false }
