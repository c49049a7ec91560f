package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// oomSweep runs a sweep against oomEngine (a card that holds 4 requests)
// with on_memory_failure set, and returns the run's decisions and passes.
func oomSweep(t *testing.T, mode, onMemoryFailure string) ([]results.Decision, []extractbench.Pass) {
	t.Helper()
	dir := t.TempDir()
	const docs = 32
	p := fmt.Sprintf(`name: oom
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: %s, levels: [1, 4, 16, 32], repetitions: 1, warmup: 0, on_memory_failure: %s}
variants:
  - name: small-card
    engine: {url: %q, model: m}
`, writeSmallCorpus(t, dir, docs), mode, onMemoryFailure, oomEngine(t))
	proto := filepath.Join(dir, "oom.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	d, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return d.Decisions, d.Passes
}

// decisionsOf lists the decisions of kind as "from→to".
func decisionsOf(ds []results.Decision, kind string) []string {
	var out []string
	for _, d := range ds {
		if d.Kind == kind {
			out = append(out, fmt.Sprintf("%d→%d", d.FromLevel, d.ToLevel))
		}
	}
	return out
}

// TestRun_BatchMemoryFailureReducesBatch: in batch mode a batch that fails
// on memory is retried smaller, and the decision says so (reduce_batch,
// the batch size and the reduced one), not retry_lower.
func TestRun_BatchMemoryFailureReducesBatch(t *testing.T) {
	ds, passes := oomSweep(t, "batch", "retry_lower")
	if got := strings.Join(decisionsOf(ds, results.DecisionReduceBatch), ", "); got != "16→10" {
		t.Errorf("reduce_batch decisions %q, want 16→10 (decisions %+v)", got, ds)
	}
	if got := decisionsOf(ds, results.DecisionRetryLower); len(got) != 0 {
		t.Errorf("retry_lower decisions %v in batch mode, want reduce_batch", got)
	}
	retried := 0
	for _, p := range passes {
		if p.Phase == extractbench.PhaseRetry && p.Level == 10 && p.RetryOf != nil && *p.RetryOf == 16 {
			retried++
		}
	}
	if retried != 1 {
		t.Errorf("%d retry passes in batches of 10, want 1", retried)
	}
}

// TestRun_MemoryFailureStopsSweep: on_memory_failure: stop ends the sweep
// at the level that failed on memory: one stop_sweep decision naming the
// levels not run, no pass above it, no retry.
func TestRun_MemoryFailureStopsSweep(t *testing.T) {
	ds, passes := oomSweep(t, "concurrency", "stop")
	stops := decisionsOf(ds, results.DecisionStopSweep)
	if strings.Join(stops, ", ") != "16→0" {
		t.Fatalf("stop_sweep decisions %v, want one from level 16 (decisions %+v)", stops, ds)
	}
	for _, d := range ds {
		if d.Kind == results.DecisionStopSweep && !strings.Contains(d.Reason, "32 not run") {
			t.Errorf("stop_sweep reason %q does not name level 32", d.Reason)
		}
	}
	if got := decisionsOf(ds, results.DecisionRetryLower); len(got) != 0 {
		t.Errorf("retry_lower decisions %v with on_memory_failure: stop", got)
	}
	for _, p := range passes {
		if p.Level > 16 || p.Phase == extractbench.PhaseRetry {
			t.Errorf("pass at level %d (%s) after the sweep stopped at 16", p.Level, p.Phase)
		}
	}
}
