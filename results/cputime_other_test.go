//go:build !unix

package results

import "time"

// processCPU is 0 where getrusage is missing: the benchmarks then report no
// CPU time per row.
func processCPU() time.Duration { return 0 }
