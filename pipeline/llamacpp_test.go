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

// TestRun_PromptCacheRecorded is item 1 of the llama.cpp issue, end to end,
// against an engine that caches every prompt as llama.cpp does
// (hostile.LlamaCppPromptCache):
//   - the warm-up's prompts are marked (pipeline.WarmupMarker), so no request
//     of the first pass is served from the warm-up: each shares with earlier
//     prompts only the instructions (they were 1 token evaluated of the whole
//     prompt when the warm-up sent the measured documents as they are);
//   - the cache is recorded per request (cached_prompt_tokens) and per pass
//     (sum and share), and the second repetition, whose documents the engine
//     has seen, shows it: all but one token of every prompt;
//   - TPOT divides by the content chunks − 1: the engine counts an
//     end-of-generation token that no chunk carries.
func TestRun_PromptCacheRecorded(t *testing.T) {
	const docs = 3
	srv := hostile.MustNew(t, hostile.LlamaCppPromptCache, hostile.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	proto := hostileProtocol(t, dir, docs, "{mode: concurrency, levels: [1], repetitions: 2, warmup: 2}", srv.URL)
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, out)
	if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE cached_prompt_tokens IS NOT NULL AND usage_reported = 1"); got != 2*docs {
		t.Fatalf("%d requests with their cached prompt tokens, want %d", got, 2*docs)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE repetition = 1 AND cached_prompt_tokens >= prompt_tokens - 1"); got != 0 {
		t.Errorf("repetition 1: %d requests served whole from the engine's cache of the warm-up, want none", got)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE repetition = 2 AND cached_prompt_tokens = prompt_tokens - 1"); got != docs {
		t.Errorf("repetition 2: %d requests cached whole (documents the engine saw in repetition 1), want %d", got, docs)
	}
	for rep := 1; rep <= 2; rep++ {
		if got := queryInt(t, db, `SELECT count(*) FROM passes p WHERE repetition = ?
			AND cached_prompt_tokens = (SELECT sum(cached_prompt_tokens) FROM requests r WHERE r.repetition = p.repetition)
			AND abs(cached_prompt_share - cached_prompt_tokens * 1.0 / (SELECT sum(prompt_tokens) FROM requests r WHERE r.repetition = p.repetition)) < 1e-12`, rep); got != 1 {
			t.Errorf("repetition %d: the pass's cached_prompt_tokens and share are not its requests' sum and share", rep)
		}
	}
	if got := queryInt(t, db, "SELECT count(*) FROM passes WHERE repetition = 2 AND cached_prompt_share > 0.9"); got != 1 {
		t.Error("repetition 2: the pass's cached share does not show its prompts served from the cache")
	}
	if got := queryInt(t, db, `SELECT count(*) FROM requests WHERE completion_tokens = client_completion_chunks + 1 AND finish_reason = 'stop'
		AND tpot_ns = (last_token_ns - first_token_ns) / (client_completion_chunks - 1)`); got != 2*docs {
		t.Errorf("%d of %d requests have TPOT over their content chunks − 1 (the engine counts an unsent end token)", got, 2*docs)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM passes p WHERE tpot_p50_ns <= (SELECT max(tpot_ns) FROM requests r WHERE r.repetition = p.repetition)
		AND tpot_p50_ns >= (SELECT min(tpot_ns) FROM requests r WHERE r.repetition = p.repetition)`); got != 2 {
		t.Error("the passes' TPOT median is not one of their requests' TPOT")
	}
}
