package client

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// TestClient_FamilyCachedTokens: every field a family declares for the
// prompt tokens its cache served (family.Quirks.CachedTokens) is read by
// the stream decoder, so that the declaration and the decoder cannot part.
func TestClient_FamilyCachedTokens(t *testing.T) {
	for _, f := range family.All() {
		for _, path := range f.Quirks.CachedTokens {
			t.Run(f.Kind+" "+path, func(t *testing.T) {
				last := map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}},
					"usage": map[string]any{"prompt_tokens": 40, "completion_tokens": 1, "total_tokens": 41}}
				setPath(last, strings.Split(path, "."), 17)
				b, err := json.Marshal(last)
				if err != nil {
					t.Fatal(err)
				}
				body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\ndata: " + string(b) + "\n\ndata: [DONE]\n\n"
				srv := replayServer(t, "text/event-stream", []byte(body))
				r := New(Config{BaseURL: srv.URL, Model: "m"}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
				if r.CachedPromptTokens == nil || *r.CachedPromptTokens != 17 {
					t.Errorf("cached prompt tokens %v (%s), want 17 read from %s", r.CachedPromptTokens, r.Detail, path)
				}
			})
		}
	}
}

// setPath sets m's value at the dotted path, making the objects on the way.
func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// TestClient_Ollama is the Ollama family end to end through the client, on
// answers written from its documented shapes (testdata/engines/ollama-*):
// Describe names the family and its version, the client is the family's
// Caller for its identity (the models /api/ps holds), a /v1 error is a
// failed request with Ollama's message, and nothing is sent for a reset.
func TestClient_Ollama(t *testing.T) {
	fixture := func(name string) string { return string(pipelinetest.ReadFile(t, "testdata/engines/"+name)) }
	var mu sync.Mutex
	calls := map[string]int{}
	count := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return calls["GET /api/version"], len(calls)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		body, status := map[string]string{
			"GET /v1/models":            fixture("ollama-models.json"),
			"GET /api/version":          fixture("ollama-api-version.json"),
			"GET /api/ps":               fixture("ollama-api-ps.json"),
			"POST /v1/chat/completions": fixture("ollama-error-v1.json"),
		}[r.Method+" "+r.URL.Path], http.StatusOK
		switch {
		case r.Method == http.MethodPost:
			status = http.StatusNotFound
		case body == "":
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c := New(Config{BaseURL: srv.URL, Model: "qwen2.5:72b"})
	ctx := pipelinetest.Context(t)

	rep := c.Describe(ctx)
	if rep.Family != family.Ollama || rep.FamilyEvidence != "GET /api/version" || rep.Version != "0.5.7" || rep.VersionSource != "/api/version" {
		t.Errorf("Describe() = family %s (%s), version %q from %q; want ollama by GET /api/version, 0.5.7", rep.Family.Label(), rep.FamilyEvidence, rep.Version, rep.VersionSource)
	}
	if n, _ := count(); n != 1 {
		t.Errorf("GET /api/version asked %d times by one Describe, want once", n)
	}
	id, err := rep.Family.Identity(ctx, c)
	if err != nil || id.Model != "qwen2.5:7b,nomic-embed-text:latest" || id.Extra["quantization_level"] != "Q4_K_M,F16" {
		t.Errorf("Identity() = %+v, %v; want the two models /api/ps holds", id, err)
	}
	r := c.Chat(ctx, extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportHTTPStatus || r.HTTPStatus != 404 || !strings.Contains(r.Detail, "not found, try pulling it first") {
		t.Errorf("Chat() = %s %d %q, want the 404 with Ollama's message", r.Kind, r.HTTPStatus, r.Detail)
	}
	_, before := count()
	got := c.ResetCache(ctx, rep.Family)
	if _, after := count(); got.Outcome != CacheResetUnsupported || after != before {
		t.Errorf("ResetCache(ollama) = %+v after %d new endpoints, want unsupported, nothing sent", got, after-before)
	}
}
