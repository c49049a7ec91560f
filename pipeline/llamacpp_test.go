package pipeline_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
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
	ps := resultstest.Passes(t, out)
	at := func(level int) extractbench.FailureCounts {
		t.Helper()
		for _, p := range ps {
			if p.Level == level {
				return p.Failures
			}
		}
		t.Fatalf("no pass at level %d", level)
		return extractbench.FailureCounts{}
	}
	if f := at(1); f.Of(extractbench.Memory)+f.Of(extractbench.Truncation)+f.Of(extractbench.Error) != 0 {
		t.Fatalf("level 1: %d failures, want none: each document fits alone", f.Of(extractbench.Memory)+f.Of(extractbench.Truncation)+f.Of(extractbench.Error))
	}
	if got := at(4).Of(extractbench.Truncation); got != 0 {
		t.Errorf("level 4: %d truncations: a request the pool held alone failed under load, which is memory", got)
	}
	if got := at(4).Of(extractbench.Memory); got == 0 {
		t.Fatal("level 4: no memory failure, want the requests the shared pool could not hold")
	}
	if got := resultstest.Count(resultstest.Requests(t, out), func(r *extractbench.Record) bool {
		return r.Level == 4 && r.Failure == extractbench.Memory && resultstest.Like(r.FailureDetail, "%context size has been exceeded%ran out under load%")
	}); got == 0 {
		t.Error("no level-4 memory failure names its evidence (the runtime error, under load)")
	}
	if got := resultstest.Count(resultstest.Decisions(t, out), func(d *results.Decision) bool {
		return d.Kind == results.DecisionRetryLower && d.FromLevel == 4 && d.ToLevel == 2
	}); got != 1 {
		t.Errorf("%d retry_lower decisions from 4 to 2, want 1", got)
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		return p.Phase == extractbench.PhaseRetry && p.Level == 2 && p.Failures.Of(extractbench.Memory) == 0 && p.Docs == docs
	}); got != 1 {
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
	reqs, ps := resultstest.Requests(t, out), resultstest.Passes(t, out)
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.CachedPromptTokens != nil && r.UsageReported }); got != 2*docs {
		t.Fatalf("%d requests with their cached prompt tokens, want %d", got, 2*docs)
	}
	t.Run("warm-up not cached, repetition 2 cached", func(t *testing.T) { cacheByRepetition(t, reqs, docs) })
	t.Run("pass sums and shares", func(t *testing.T) { passCacheFigures(t, reqs, ps) })
	t.Run("TPOT over content chunks", func(t *testing.T) { tpotOverChunks(t, reqs, ps, docs) })
}

// cacheByRepetition: no request of repetition 1 is served from the
// warm-up's cache; every one of repetition 2 is, but for one token.
func cacheByRepetition(t *testing.T, reqs []extractbench.Record, docs int) {
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { _, nearly := cachedWhole(1, r); return nearly }); got != 0 {
		t.Errorf("repetition 1: %d requests served whole from the engine's cache of the warm-up, want none", got)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { whole, _ := cachedWhole(2, r); return whole }); got != docs {
		t.Errorf("repetition 2: %d requests cached whole (documents the engine saw in repetition 1), want %d", got, docs)
	}
}

// cachedWhole reports whether r, of repetition rep, was served from the
// cache but for its last token (whole), or at least that (nearly).
func cachedWhole(rep int, r *extractbench.Record) (whole, nearly bool) {
	if r.Repetition != rep || r.CachedPromptTokens == nil || r.PromptTokens == 0 {
		return false, false
	}
	return *r.CachedPromptTokens == r.PromptTokens-1, *r.CachedPromptTokens >= r.PromptTokens-1
}

// passCacheFigures: each pass's cached_prompt_tokens and share are its
// requests' sum and share, and repetition 2's shows its prompts cached.
func passCacheFigures(t *testing.T, reqs []extractbench.Record, ps []extractbench.Pass) {
	for rep := 1; rep <= 2; rep++ {
		cached, prompt := cachedTokens(reqs, rep)
		if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
			return p.Repetition == rep && p.CachedPromptTokens != nil && *p.CachedPromptTokens == cached && prompt != 0 &&
				p.CachedPromptShare != nil && math.Abs(*p.CachedPromptShare-float64(*p.CachedPromptTokens)*1.0/float64(prompt)) < 1e-12
		}); got != 1 {
			t.Errorf("repetition %d: the pass's cached_prompt_tokens and share are not its requests' sum and share", rep)
		}
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		return p.Repetition == 2 && p.CachedPromptShare != nil && *p.CachedPromptShare > 0.9
	}); got != 1 {
		t.Error("repetition 2: the pass's cached share does not show its prompts served from the cache")
	}
}

// cachedTokens sums the cached and the prompt tokens of repetition rep's requests.
func cachedTokens(reqs []extractbench.Record, rep int) (cached, prompt int64) {
	for _, r := range reqs {
		if r.Repetition != rep {
			continue
		}
		if r.CachedPromptTokens != nil {
			cached += int64(*r.CachedPromptTokens)
		}
		prompt += int64(r.PromptTokens)
	}
	return cached, prompt
}

// tpotOverChunks: TPOT divides by the content chunks − 1, and each pass's
// median is within its requests' TPOT.
func tpotOverChunks(t *testing.T, reqs []extractbench.Record, ps []extractbench.Pass, docs int) {
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		tpot, ok := r.TPOT()
		return r.CompletionTokens == r.ClientChunks+1 && r.FinishReason == "stop" && ok && r.LastTokenNS != 0 && r.FirstTokenNS != 0 &&
			r.ClientChunks != 1 && tpot == (r.LastTokenNS-r.FirstTokenNS)/int64(r.ClientChunks-1)
	}); got != 2*docs {
		t.Errorf("%d of %d requests have TPOT over their content chunks − 1 (the engine counts an unsent end token)", got, 2*docs)
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		tpots := repetitionTPOTs(reqs, p.Repetition)
		return p.TPOTP50NS != nil && len(tpots) > 0 && *p.TPOTP50NS <= slices.Max(tpots) && *p.TPOTP50NS >= slices.Min(tpots)
	}); got != 2 {
		t.Error("the passes' TPOT median is not one of their requests' TPOT")
	}
}

// repetitionTPOTs are the TPOTs of repetition rep's requests that have one.
func repetitionTPOTs(reqs []extractbench.Record, rep int) []int64 {
	var out []int64
	for _, r := range reqs {
		if ns, ok := r.TPOT(); ok && r.Repetition == rep {
			out = append(out, ns)
		}
	}
	return out
}
