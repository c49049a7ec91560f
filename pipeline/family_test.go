package pipeline_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// familyProxy puts answers of an engine family's own endpoints (method and
// path -> body) in front of a hostile engine, which serves the rest, and
// counts every request by method and path.
func familyProxy(t *testing.T, target string, answers map[string]string) (string, func(string) int) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		mu.Lock()
		seen[key]++
		mu.Unlock()
		if body, ok := answers[key]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func(key string) int {
		mu.Lock()
		defer mu.Unlock()
		return seen[key]
	}
}

// TestRun_FamilyDetectedOnce: an engine whose kind the protocol leaves out
// is described once, when it is up, and its family (llama.cpp, named by
// /props) gives every pass its cache reset without the engine being
// described again; its identity alone is read again before each pass.
func TestRun_FamilyDetectedOnce(t *testing.T) {
	srv := hostile.MustNew(t, hostile.LlamaCppPromptCache, hostile.Options{})
	base, seen := familyProxy(t, srv.URL, map[string]string{"GET /props": `{"build_info":"b1-test","total_slots":4}`})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(),
		ProtocolPath: cacheProtocol(t, dir, base, hostile.Model, "", ""), OutDir: out, Quiet: true}); err != nil {
		t.Fatalf("run: %v", err)
	}
	ps := resultstest.Passes(t, out)
	for _, p := range ps {
		if p.CacheReset != "reset" {
			t.Errorf("pass rep %d cache_reset = %q, want reset (llama.cpp detected)", p.Repetition, p.CacheReset)
		}
	}
	// /props is also llama.cpp's identity, read when the engine is pinned
	// and again before each pass (engine_changed): the family is learnt
	// once, when the engine is described, and never from those reads.
	if n, want := seen("GET /props"), 1+1+len(ps); n != want {
		t.Errorf("GET /props asked %d times for %d passes, want %d: once to describe the engine, once to pin its identity, once before each pass", n, len(ps), want)
	}
	if m := resultstest.Manifest(t, out); m.Engine.Version != "b1-test" {
		t.Errorf("manifest engine version %q, want /props's build_info", m.Engine.Version)
	}
}

// TestRun_OllamaTelemetry: an Ollama (its /api/version and /api/ps in
// front of a hostile engine) is detected, its passes sample /api/ps, not a
// /metrics it does not have, into engine_vram_bytes and
// engine_memory_bytes, and its family's missing reset is said once.
func TestRun_OllamaTelemetry(t *testing.T) {
	srv := hostile.MustNew(t, hostile.Normal, hostile.Options{})
	ps := `{"models":[{"name":"` + hostile.Model + `","model":"` + hostile.Model + `","size":6000000000,"digest":"ab12","details":{"quantization_level":"Q4_K_M"},"expires_at":"2025-10-17T16:47:07.93355-07:00","size_vram":5000000000,"context_length":4096}]}`
	base, seen := familyProxy(t, srv.URL, map[string]string{"GET /api/version": `{"version":"0.12.6"}`, "GET /api/ps": ps})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(),
		ProtocolPath: cacheProtocol(t, dir, base, hostile.Model, "", ""), OutDir: out, Quiet: true}); err != nil {
		t.Fatalf("run: %v", err)
	}
	if n := seen("GET /metrics"); n != 0 {
		t.Errorf("GET /metrics asked %d times of an Ollama", n)
	}
	got := map[string]float64{}
	for _, r := range resultstest.Telemetry(t, out) {
		got[r.Metric] = r.Value
	}
	if got[extractbench.MetricEngineVRAM] != 5e9 || got[extractbench.MetricEngineMemory] != 6e9 {
		t.Errorf("telemetry %v, want /api/ps's size_vram 5e9 and size 6e9", got)
	}
	var resets, telemetryErrors int
	for _, e := range resultstest.Events(t, out) {
		switch e.Kind {
		case results.EventCacheReset:
			resets++
			if !strings.Contains(e.Detail, "ollama has no prompt-cache reset") || !strings.Contains(e.Detail, "detected ollama") {
				t.Errorf("cache_reset event %q: want the family detected and its missing reset", e.Detail)
			}
		case results.EventTelemetryErrors:
			telemetryErrors++
			t.Errorf("telemetry_errors: %s", e.Detail)
		}
	}
	if resets != 1 {
		t.Errorf("%d cache_reset events, want one saying Ollama has none", resets)
	}
	for _, p := range resultstest.Passes(t, out) {
		if p.CacheReset != "unsupported" {
			t.Errorf("pass rep %d cache_reset = %q, want unsupported", p.Repetition, p.CacheReset)
		}
	}
}
