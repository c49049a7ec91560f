package client

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// TestClient_ResetCache: each family's reset against answers in its
// engine's shapes; a failure (an error status, a disabled endpoint) is the
// outcome failed with the engine's status and short answer, never a Go
// error; a family without a reset sends nothing.
func TestClient_ResetCache(t *testing.T) {
	slots2 := `[{"id":0,"n_ctx":4096,"speculative":false,"is_processing":false},{"id":1,"n_ctx":4096,"speculative":false,"is_processing":false}]`
	tests := []struct {
		name    string
		fam     *family.Family
		routes  map[string]route
		outcome string
		detail  []string // the detail holds each
	}{
		{"vllm", family.VLLM, map[string]route{"POST /reset_prefix_cache": {200, ""}}, CacheResetDone, []string{"POST /reset_prefix_cache: 200"}},
		{"vllm without dev mode", family.VLLM, map[string]route{}, CacheResetFailed, []string{"POST /reset_prefix_cache: 404"}},
		{"sglang", family.SGLang, map[string]route{"POST /flush_cache": {200, "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n"}},
			CacheResetDone, []string{"POST /flush_cache: 200 Cache flushed. Please check"}},
		{"sglang busy", family.SGLang, map[string]route{"POST /flush_cache": {400, "Cache not flushed: running requests"}}, CacheResetFailed, []string{"POST /flush_cache: 400 Cache not flushed"}},
		{"builtin", family.Builtin, map[string]route{"POST " + family.BuiltinCacheResetPath: {200, `{"reset":true,"cached_tokens":0}`}}, CacheResetDone, []string{`"cached_tokens":0`}},
		{"llamacpp", family.LlamaCpp, map[string]route{"GET /slots": {200, slots2},
			"POST /slots/0": {200, `{"id_slot":0,"n_erased":211}`}, "POST /slots/1": {200, `{"id_slot":1,"n_erased":5}`}},
			CacheResetDone, []string{"GET /slots: 2 slots", "erased 2 slots, 216 cached tokens", "--cache-ram 0"}},
		{"llamacpp --no-slots: /props counts them", family.LlamaCpp, map[string]route{
			"GET /slots":    {501, `{"error":{"code":501,"message":"This server does not support slots endpoint. Start it with ` + "`--slots`" + `","type":"not_supported_error"}}`},
			"GET /props":    {200, `{"total_slots":2,"build_info":"b1-de3ff81"}`},
			"POST /slots/0": {200, `{"id_slot":0,"n_erased":0}`},
			"POST /slots/1": {200, `{"id_slot":1,"n_erased":0}`}},
			CacheResetDone, []string{"GET /slots: 501", "total_slots 2", "erased 2 slots"}},
		{"llamacpp without --slot-save-path", family.LlamaCpp, map[string]route{"GET /slots": {200, slots2},
			"POST /slots/0": {501, hostile.LlamaCppSlotActionsDisabled}},
			CacheResetFailed, []string{"POST /slots/0?action=erase: 501", "--slot-save-path"}},
		{"llamacpp erase 500", family.LlamaCpp, map[string]route{"GET /slots": {200, slots2},
			"POST /slots/0": {200, `{"id_slot":0,"n_erased":3}`}, "POST /slots/1": {500, `{"error":{"code":500,"message":"boom"}}`}},
			CacheResetFailed, []string{"POST /slots/1?action=erase: 500"}},
		{"llamacpp nothing to list", family.LlamaCpp, map[string]route{"GET /slots": {501, "no"}, "GET /props": {404, ""}},
			CacheResetFailed, []string{"GET /slots: 501", "GET /props: 404"}},
		{"llamacpp slots not a list", family.LlamaCpp, map[string]route{"GET /slots": {200, `{"slots":0}`}}, CacheResetFailed, []string{"without a list of slots"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New(Config{BaseURL: engineMux(t, tt.routes).URL}).ResetCache(pipelinetest.Context(t), tt.fam)
			if got.Outcome != tt.outcome {
				t.Errorf("ResetCache(%s) = %q (%s), want %q", tt.fam.Kind, got.Outcome, got.Detail, tt.outcome)
			}
			for _, w := range tt.detail {
				if !strings.Contains(got.Detail, w) {
					t.Errorf("ResetCache(%s) detail %q lacks %q", tt.fam.Kind, got.Detail, w)
				}
			}
			if col := got.Column(); (tt.outcome == CacheResetFailed) != strings.HasPrefix(col, "failed: ") {
				t.Errorf("Column() = %q for outcome %q", col, got.Outcome)
			}
		})
	}
}

// TestClient_ResetCacheUnsupported: TGI, Ollama, our transformers server and
// an engine of unknown kind have no reset: nothing is sent, and it says so.
func TestClient_ResetCacheUnsupported(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	t.Cleanup(srv.Close)
	for _, f := range []*family.Family{family.TGI, family.Ollama, family.Transformers, family.Generic, family.ByKind("other"), nil} {
		got := New(Config{BaseURL: srv.URL}).ResetCache(pipelinetest.Context(t), f)
		if got.Outcome != CacheResetUnsupported || got.Column() != "unsupported" || !strings.Contains(got.Detail, "no prompt-cache reset") {
			t.Errorf("ResetCache(%s) = %+v, want unsupported and why", f.Label(), got)
		}
		if f.CanReset() {
			t.Errorf("%s.CanReset() = true", f.Label())
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests sent for families without a reset, want none", n)
	}
}

// TestClient_ResetCacheHostileLlamaCpp: the hostile llama.cpp engine's
// prompt cache, filled by a request, is empty after the reset: the same
// prompt sent again is not served from it.
func TestClient_ResetCacheHostileLlamaCpp(t *testing.T) {
	srv := hostile.MustNew(t, hostile.LlamaCppPromptCache, hostile.Options{N: 3})
	c := New(Config{BaseURL: srv.URL, Model: hostile.Model})
	ctx, clock := pipelinetest.Context(t), extractbench.NewClock()
	cached := func() int64 {
		resp := c.Chat(ctx, clock, clock.Now(), "", "Extract.\n\nInvoice 7 dated 2024-01-02, total 12.50", Generation{MaxTokens: 16})
		if resp.CachedPromptTokens == nil {
			t.Fatalf("no cached prompt tokens reported: %+v", resp.Transport)
		}
		return int64(*resp.CachedPromptTokens)
	}
	cached()
	if n := cached(); n == 0 {
		t.Fatal("the prompt sent again was not cached: the engine does not cache")
	}
	got := c.ResetCache(ctx, family.LlamaCpp)
	if got.Outcome != CacheResetDone || !strings.Contains(got.Detail, "erased 3 slots") {
		t.Fatalf("ResetCache = %+v, want 3 slots erased", got)
	}
	if n := cached(); n != 0 {
		t.Errorf("after the reset %d prompt tokens were served from the cache, want 0", n)
	}
	off := hostile.MustNew(t, hostile.LlamaCppNoSlotActions, hostile.Options{})
	if got := New(Config{BaseURL: off.URL}).ResetCache(ctx, family.LlamaCpp); got.Outcome != CacheResetFailed || !strings.Contains(got.Detail, "501") {
		t.Errorf("without slot actions: ResetCache = %+v, want failed with the 501", got)
	}
}

// TestClient_ResetCacheRedactsAndBounds: the engine's answer is cleaned
// (no API key) and short; an engine that holds the call fails it at the
// client's CallTimeout.
func TestClient_ResetCacheRedactsAndBounds(t *testing.T) {
	const key = "sk-secret-0123456789"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		w.Write([]byte("denied for " + r.Header.Get("Authorization") + strings.Repeat(" padding", 100)))
	}))
	t.Cleanup(echo.Close)
	got := New(Config{BaseURL: echo.URL, APIKey: key}).ResetCache(pipelinetest.Context(t), family.VLLM)
	if got.Outcome != CacheResetFailed || strings.Contains(got.Detail, key) || len(got.Detail) > 300 {
		t.Errorf("ResetCache = %q (%d bytes): want failed, without the key, short", got.Detail, len(got.Detail))
	}
	hold := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(hold); slow.Close() })
	start := time.Now()
	got = New(Config{BaseURL: slow.URL, CallTimeout: 100 * time.Millisecond}).ResetCache(pipelinetest.Context(t), family.SGLang)
	if got.Outcome != CacheResetFailed || !strings.Contains(got.Detail, "no answer") || time.Since(start) > 5*time.Second {
		t.Errorf("ResetCache on a silent engine = %+v after %s, want failed: no answer, at the call timeout", got, time.Since(start))
	}
}
