package dispatch

import (
	"context"

	"github.com/extractbench/extractbench"
)

// Context runs a context sweep's pass: the concurrency dispatcher at the
// sweep's fixed concurrency (sweep.concurrency), whatever the level, which
// names the length class the pass's documents are of.
func Context[R any](ctx context.Context, sw extractbench.Sweep, p Pass[R]) error {
	return Concurrent(ctx, sw.Concurrency, p)
}
