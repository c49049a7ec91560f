package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// onMemoryFailures applies sweep.on_memory_failure once a level above the
// baseline (index li) had n memory failures: record goes on; stop ends the
// sweep; skip leaves out the levels above it; retry_lower, in addition,
// measures the level halfway down (a batch made smaller).
func (vr *variantRun) onMemoryFailures(ctx context.Context, li, level, n int) error {
	sw := vr.rs.proto.Sweep
	if n == 0 || li == 0 || sw.OnMemoryFailure == "record" {
		return nil
	}
	vr.stopAt = level
	switch {
	case sw.OnMemoryFailure == "stop":
		vr.stopSweep(ctx, li, level, n)
	case sw.OnMemoryFailure == "retry_lower" && sw.Mode != extractbench.ModeContext: // no class lies between two classes
		return vr.retryLower(ctx, li, level, n)
	}
	return nil
}

// stopSweep records that the sweep ends at level, naming the levels not run.
func (vr *variantRun) stopSweep(ctx context.Context, li, level, n int) {
	rest := vr.levels[li+1:]
	if len(rest) == 0 {
		return
	}
	names := make([]string, len(rest))
	for i, l := range rest {
		names[i] = eval.LevelName(vr.rs.proto.Sweep.Mode, l)
	}
	vr.rs.decision(ctx, vr.v.Name, results.DecisionStopSweep, level, 0, fmt.Sprintf("%d memory failure(s) at level %d; on_memory_failure=stop ends the sweep: %s not run",
		n, level, strings.Join(names, ", ")))
}

// skipLevel records that level is not measured: a lower one had memory
// failures.
func (vr *variantRun) skipLevel(ctx context.Context, level int) {
	vr.rs.decision(ctx, vr.v.Name, results.DecisionSkipLevel, level, 0, fmt.Sprintf("level %d had memory failures; on_memory_failure=%s skips higher levels", vr.stopAt, vr.rs.proto.Sweep.OnMemoryFailure))
}

// retryLower measures the level halfway between the one below (index
// li-1) and level, when there is one, each planned repetition as a retry;
// the first attempt stays the primary result.
func (vr *variantRun) retryLower(ctx context.Context, li, level, n int) error {
	sw := vr.rs.proto.Sweep
	lower := (vr.levels[li-1] + level) / 2
	if lower <= vr.levels[li-1] || lower >= level {
		return nil
	}
	kind, reason := results.DecisionRetryLower, fmt.Sprintf("%d memory failure(s) at level %d", n, level)
	if sw.Mode == extractbench.ModeBatch { // the batch itself is made smaller
		kind, reason = results.DecisionReduceBatch, fmt.Sprintf("%d memory failure(s) in batches of %d; retried in batches of %d", n, level, lower)
	}
	vr.rs.decision(ctx, vr.v.Name, kind, level, lower, reason+"; the first attempt stays the primary result")
	for rep := 1; rep <= sw.Repetitions && ctx.Err() == nil; rep++ {
		if _, err := vr.runPass(ctx, lower, rep, extractbench.PhaseRetry, level); err != nil {
			return err
		}
	}
	return nil
}
