package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
)

// TestRun_KVPoolExhaustedIsMemory is item 3 of the llama.cpp issue, end to
// end: against llama.cpp whose slots share a KV pool too small for three
// requests at once (hostile.LlamaCppKVPool, the runtime error as captured
// from llama-server -c 8192), every document passes alone at level 1 and
// fails at level 4 with "Context size has been exceeded.". Those failures
// are memory (they were truncation, so the level was not a memory failure
// and retry_lower never ran): the level records them as memory and the
// sweep retries at level 2, which the pool holds.
func TestRun_KVPoolExhaustedIsMemory(t *testing.T) {
	const docs = 4
	srv := hostile.MustNew(t, hostile.LlamaCppKVPool, hostile.Options{N: 2})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	proto := hostileProtocol(t, dir, docs, "{mode: concurrency, levels: [1, 4], repetitions: 1, warmup: 0, on_memory_failure: retry_lower}", srv.URL)
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, out)
	if got := queryInt(t, db, "SELECT failures_memory + failures_truncation + failures_error FROM passes WHERE level = 1"); got != 0 {
		t.Fatalf("level 1: %d failures, want none: each document fits alone", got)
	}
	if got := queryInt(t, db, "SELECT failures_truncation FROM passes WHERE level = 4"); got != 0 {
		t.Errorf("level 4: %d truncations: a request the pool held alone failed under load, which is memory", got)
	}
	if got := queryInt(t, db, "SELECT failures_memory FROM passes WHERE level = 4"); got == 0 {
		t.Fatal("level 4: no memory failure, want the requests the shared pool could not hold")
	}
	if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE level = 4 AND failure = 'memory' AND failure_detail LIKE '%context size has been exceeded%ran out under load%'"); got == 0 {
		t.Error("no level-4 memory failure names its evidence (the runtime error, under load)")
	}
	if got := queryInt(t, db, "SELECT count(*) FROM decisions WHERE kind = 'retry_lower' AND from_level = 4 AND to_level = 2"); got != 1 {
		t.Errorf("%d retry_lower decisions from 4 to 2, want 1", got)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM passes WHERE phase = 'retry' AND level = 2 AND failures_memory = 0 AND docs = ?", docs); got != 1 {
		t.Errorf("%d retry passes at level 2 without memory failures, want 1", got)
	}
}
