//go:build !unix

package resultstest

import "time"

// ProcessCPU is 0 where getrusage is missing: the benchmarks then report
// no CPU time per row.
func ProcessCPU() time.Duration { return 0 }
