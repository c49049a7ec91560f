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
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// cacheProtocol is a small protocol of two repetitions at level 1 against
// url (model, kind as given; kind "" leaves it out) with the protocol's
// cache key (cache "" leaves it out: the default).
func cacheProtocol(t *testing.T, dir, url, model, kind, cache string) string {
	t.Helper()
	engine := fmt.Sprintf("{url: %q, model: %s}", url, model)
	if kind != "" {
		engine = fmt.Sprintf("{url: %q, model: %s, kind: %s}", url, model, kind)
	}
	key := ""
	if cache != "" {
		key = "cache: " + cache + "\n"
	}
	p := fmt.Sprintf(`name: cache
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 2, warmup: 1}
%stelemetry_interval: 10ms
request_timeout: 5s
variants:
  - name: v
    engine: %s
`, writeSmallCorpus(t, dir, 4), key, engine)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRun_CacheReset is issue 38's cache isolation, end to end, against
// llama.cpp's prompt cache (hostile.LlamaCppPromptCache: every prompt kept,
// slots erased by POST /slots/{id}?action=erase):
//   - cache: reset (the default) erases every slot before each pass: the
//     second repetition, which sends the first one's documents again, is
//     served from the cache no more than the first (what the documents
//     share within a pass), each pass says reset, and each reset is an
//     event with the engine's answers;
//   - cache: keep leaves the first repetition's documents in the cache:
//     the second is served almost whole from it, its passes say kept, no
//     reset is asked, and the level is labelled (its repetitions' cached
//     shares differ beyond eval.CacheShareTolerance);
//   - a reset the engine refuses (llama-server without --slot-save-path:
//     501) is recorded on the pass and in an event, and the run goes on;
//   - an engine of unknown kind has no reset: unsupported, one event.
func TestRun_CacheReset(t *testing.T) {
	t.Run("reset", cacheResetErases)
	t.Run("keep", cacheKeepKeeps)
	t.Run("refused", cacheResetRefused)
	t.Run("unknown kind", cacheResetUnsupported)
}

// cacheResetErases: cache: reset erases every slot before each pass.
func cacheResetErases(t *testing.T) {
	out := runCache(t, hostile.LlamaCppPromptCache, "llamacpp", "")
	ps := resultstest.Passes(t, out)
	first, second := cachedShare(t, ps, 1), cachedShare(t, ps, 2)
	t.Logf("cache: reset: cached prompt share repetition 1 %.4f, repetition 2 %.4f", first, second)
	if second > first+0.01 || second > 0.5 {
		t.Errorf("repetition 2 cached share %.3f after a reset, repetition 1 %.3f: want no more than the first's", second, first)
	}
	for _, p := range ps {
		if p.CacheReset != "reset" {
			t.Errorf("pass rep %d cache_reset = %q, want reset", p.Repetition, p.CacheReset)
		}
	}
	es := cacheResets(t, out)
	if len(es) != len(ps) {
		t.Fatalf("%d cache_reset events for %d passes, want one a pass", len(es), len(ps))
	}
	for _, e := range es {
		if !strings.Contains(e.Detail, "erased 4 slots") || !strings.Contains(e.Detail, "repetition") {
			t.Errorf("cache_reset event %q: want the pass and the slots erased", e.Detail)
		}
	}
	if m := resultstest.Manifest(t, out); m.Cache != "reset" {
		t.Errorf("manifest cache = %q, want reset", m.Cache)
	}
	if n := cacheNote(ps); n != "" {
		t.Errorf("level labelled %q after resets, want no label", n)
	}
}

// cacheKeepKeeps: cache: keep leaves the first repetition's documents in
// the cache, and the level is labelled.
func cacheKeepKeeps(t *testing.T) {
	out := runCache(t, hostile.LlamaCppPromptCache, "llamacpp", "keep")
	ps := resultstest.Passes(t, out)
	t.Logf("cache: keep: cached prompt share repetition 1 %.4f, repetition 2 %.4f", cachedShare(t, ps, 1), cachedShare(t, ps, 2))
	if second := cachedShare(t, ps, 2); second < 0.9 {
		t.Errorf("repetition 2 cached share %.3f with cache: keep, want above 0.9 (the first's documents)", second)
	}
	for _, p := range ps {
		if p.CacheReset != "kept" {
			t.Errorf("pass rep %d cache_reset = %q, want kept", p.Repetition, p.CacheReset)
		}
	}
	if es := cacheResets(t, out); len(es) != 0 {
		t.Errorf("%d cache_reset events with cache: keep, want none", len(es))
	}
	if n := cacheNote(ps); !strings.Contains(n, "across its repetitions") {
		t.Errorf("level label %q, want its repetitions' cached shares called apart", n)
	}
}

// cacheResetRefused: a reset the engine refuses is recorded and the run
// goes on.
func cacheResetRefused(t *testing.T) {
	out := runCache(t, hostile.LlamaCppNoSlotActions, "llamacpp", "reset")
	ps := resultstest.Passes(t, out)
	for _, p := range ps {
		if !strings.HasPrefix(p.CacheReset, "failed: ") || !strings.Contains(p.CacheReset, "501") || !p.Complete() {
			t.Errorf("pass rep %d cache_reset = %q (status %s), want failed with the 501, the pass complete", p.Repetition, p.CacheReset, p.Status)
		}
	}
	if es := cacheResets(t, out); len(es) != len(ps) || !strings.Contains(es[0].Detail, "--slot-save-path") {
		t.Errorf("cache_reset events %+v: want one a pass with the engine's answer", es)
	}
}

// cacheResetUnsupported: an engine of unknown kind has no reset.
func cacheResetUnsupported(t *testing.T) {
	out := runCache(t, hostile.Normal, "", "")
	for _, p := range resultstest.Passes(t, out) {
		if p.CacheReset != "unsupported" {
			t.Errorf("pass rep %d cache_reset = %q, want unsupported", p.Repetition, p.CacheReset)
		}
	}
	if es := cacheResets(t, out); len(es) != 1 || !strings.Contains(es[0].Detail, "no prompt-cache reset") {
		t.Errorf("cache_reset events %+v: want one saying there is no reset", es)
	}
}

// runCache runs cacheProtocol against a hostile engine of mode and returns
// the results directory.
func runCache(t *testing.T, mode hostile.Mode, kind, cache string) string {
	t.Helper()
	srv := hostile.MustNew(t, mode, hostile.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(),
		ProtocolPath: cacheProtocol(t, dir, srv.URL, hostile.Model, kind, cache), OutDir: out, Quiet: true}); err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// cachedShare is repetition rep's cached prompt share.
func cachedShare(t *testing.T, ps []extractbench.Pass, rep int) float64 {
	t.Helper()
	for _, p := range ps {
		if p.Repetition == rep && p.CachedPromptShare != nil {
			return *p.CachedPromptShare
		}
	}
	t.Fatalf("repetition %d has no cached prompt share", rep)
	return 0
}

// cacheResets are the run's cache_reset events.
func cacheResets(t *testing.T, out string) []results.Event {
	var es []results.Event
	for _, e := range resultstest.Events(t, out) {
		if e.Kind == results.EventCacheReset {
			es = append(es, e)
		}
	}
	return es
}

// cacheNote is the label of the first level eval's aggregator makes of ps.
func cacheNote(ps []extractbench.Pass) string {
	for _, s := range eval.AggregateLevels(ps, extractbench.Acceptance{}, eval.Planned{}) {
		for _, l := range s.Levels {
			return l.CacheNote
		}
	}
	return ""
}

// TestRun_CacheResetBuiltin: the built-in engine's reset is asked before
// every pass and answers that nothing was cached.
func TestRun_CacheResetBuiltin(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(),
		ProtocolPath: cacheProtocol(t, dir, "builtin", "sim-8b", "", ""), OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	ps := resultstest.Passes(t, out)
	for _, p := range ps {
		if p.CacheReset != "reset" {
			t.Errorf("pass rep %d cache_reset = %q, want reset", p.Repetition, p.CacheReset)
		}
	}
	n := 0
	for _, e := range resultstest.Events(t, out) {
		if e.Kind == results.EventCacheReset && strings.Contains(e.Detail, "nothing was cached") {
			n++
		}
	}
	if n != len(ps) || n == 0 {
		t.Errorf("%d cache_reset events saying nothing was cached, want %d", n, len(ps))
	}
}
