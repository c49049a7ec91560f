package client

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// llamaCapture is a capture of the real llama.cpp server (testdata/llamacpp/README.md).
func llamaCapture(t *testing.T, name string) []byte {
	t.Helper()
	return pipelinetest.ReadFile(t, "testdata/llamacpp/"+name)
}

// statusServer answers every POST with status and body.
func statusServer(t *testing.T, status int, contentType string, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestClient_CachedPromptTokens reads the prompt tokens an engine took from
// its prompt cache: llama.cpp's usage.prompt_tokens_details.cached_tokens
// (210 of 211 in the capture: doc-0002 sent twice), its timings.cache_n
// where the usage has no details, and nothing where the engine says nothing.
func TestClient_CachedPromptTokens(t *testing.T) {
	const (
		timingsOnly = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":75,\"completion_tokens\":2},\"timings\":{\"cache_n\":74,\"prompt_n\":1,\"prompt_ms\":1.5}}\n\ndata: [DONE]\n\n"
		timingsApart = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}],\"timings\":{\"cache_n\":12}}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":75,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"
		detailsNull = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":75,\"completion_tokens\":2,\"prompt_tokens_details\":null}}\n\ndata: [DONE]\n\n"
		oddShape = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":75,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":\"7\"}},\"timings\":{\"cache_n\":-3}}\n\ndata: [DONE]\n\n"
	)
	tests := []struct {
		name       string
		body       string
		wantCached int // -1: not reported
		wantPrompt int
	}{
		{"llama.cpp capture", string(llamaCapture(t, "chat-stream-cached.sse")), 210, 211},
		{"timings beside a usage without details", timingsOnly, 74, 75},
		{"timings on a chunk of their own", timingsApart, 12, 75},
		{"details null (SGLang, vLLM without --enable-prompt-tokens-details)", detailsNull, -1, 75},
		{"a string and a negative count are not reported, and do not fail the chunk", oddShape, -1, 75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := replayServer(t, "text/event-stream", []byte(tt.body))
			r := New(Config{BaseURL: srv.URL, Model: "m", MaxConns: 1}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "sys", "doc", Generation{MaxTokens: 64})
			if r.Kind != extractbench.TransportOK || !r.UsageReported || r.PromptTokens != tt.wantPrompt {
				t.Fatalf("Chat() = kind %q (%s), usage %v, prompt %d; want a complete answer with usage, prompt %d", r.Kind, r.Detail, r.UsageReported, r.PromptTokens, tt.wantPrompt)
			}
			got := -1
			if r.CachedPromptTokens != nil {
				got = *r.CachedPromptTokens
			}
			if got != tt.wantCached {
				t.Errorf("CachedPromptTokens = %d, want %d (-1: not reported)", got, tt.wantCached)
			}
		})
	}
}

// TestClient_LlamaCppRuntimeContextError reads the three shapes of
// llama.cpp's runtime failure "Context size has been exceeded." (the shared
// KV pool full under load), captured from four long documents at once on
// `llama-server -c 8192`: a 500 answer, and an error event in a 200 stream
// before or after content. Each is an HTTP 500 with the error object as its
// body, which the classifier reads (eval's TestClassify_LlamaCppRuntimeContext).
func TestClient_LlamaCppRuntimeContextError(t *testing.T) {
	tests := []struct {
		name, file, contentType string
		wantKind                extractbench.TransportKind
	}{
		{"500 answer", "error-runtime-context-500.json", "application/json; charset=utf-8", extractbench.TransportHTTPStatus},
		{"first event of a stream", "error-runtime-context-stream-first.sse", "text/event-stream", extractbench.TransportHTTPStatus},
		{"after content", "error-runtime-context-stream.sse", "text/event-stream", extractbench.TransportHTTPStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := llamaCapture(t, tt.file)
			status := 200
			if strings.HasSuffix(tt.file, "-500.json") {
				status = 500
			}
			srv := statusServer(t, status, tt.contentType, body)
			r := New(Config{BaseURL: srv.URL, Model: "m", MaxConns: 1}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "sys", "doc", Generation{MaxTokens: 64})
			if r.Kind != tt.wantKind || r.HTTPStatus != 500 || !strings.Contains(r.ErrorBody, "Context size has been exceeded.") {
				t.Errorf("Chat() = kind %q, status %d, error body %q; want %q, 500 and the error object", r.Kind, r.HTTPStatus, r.ErrorBody, tt.wantKind)
			}
			if r.PromptTokens != 0 {
				t.Errorf("PromptTokens = %d: the runtime error names no prompt size", r.PromptTokens)
			}
		})
	}
}

// TestClient_LlamaCppEOSNotStreamed: the captured llama.cpp answer counts 26
// completion tokens in its usage and streams 25 content chunks (the
// end-of-generation token has no chunk), so TPOT spans 24 steps
// (extractbench.Record.TPOTSteps), not 25.
func TestClient_LlamaCppEOSNotStreamed(t *testing.T) {
	srv := replayServer(t, "text/event-stream", llamaCapture(t, "chat-stream-cached.sse"))
	r := New(Config{BaseURL: srv.URL, Model: "m", MaxConns: 1}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "sys", "doc", Generation{MaxTokens: 128})
	rec := extractbench.Record{Response: r}
	if r.CompletionTokens != 26 || r.ClientChunks != 25 || r.FinishReason != "stop" || rec.TPOTSteps() != 24 {
		t.Errorf("completion %d, chunks %d, finish %q, TPOT steps %d; want 26, 25, stop, 24", r.CompletionTokens, r.ClientChunks, r.FinishReason, rec.TPOTSteps())
	}
}

// TestClient_DescribeModelFile: what an engine says of the weights file it
// serves, from the captures of three GGUF files under one alias (their type,
// bytes and parameters), from an older llama.cpp whose meta has no ftype,
// and nothing from engines that do not describe a file.
func TestClient_DescribeModelFile(t *testing.T) {
	tests := []struct {
		name                string
		models, props, path string
		model               string
		want                ModelFile
	}{
		{"llama.cpp Q8_0", "llamacpp/v1-models-q8_0.json", "llamacpp/props-q8_0.json", "/props", "extract-llama-15m", ModelFile{"Q8_0", 15649656, 14711040}},
		{"llama.cpp BF16", "llamacpp/v1-models-bf16.json", "llamacpp/props-bf16.json", "/props", "extract-llama-15m", ModelFile{"BF16", 29435136, 14711040}},
		{"llama.cpp Q4_0", "llamacpp/v1-models-q4_0.json", "llamacpp/props-q4_0.json", "/props", "extract-llama-15m", ModelFile{"Q4_0", 9358200, 14711040}},
		{"llama.cpp before ftype (b4567)", "engines/llamacpp-models.json", "engines/llamacpp-props.json", "/props", "/models/qwen2.5-7b-instruct-q4_k_m.gguf", ModelFile{"", 4677120000, 7615616512}},
		{"ftype from /props when the meta has none", "engines/llamacpp-models.json", "llamacpp/props-q8_0.json", "/props", "/models/qwen2.5-7b-instruct-q4_k_m.gguf", ModelFile{"Q8_0", 4677120000, 7615616512}},
		{"vLLM", "engines/vllm-models.json", "engines/vllm-version.json", "/version", "Qwen/Qwen2.5-7B-Instruct", ModelFile{}},
		{"TGI", "engines/tgi-models.json", "engines/tgi-info.json", "/info", "Qwen/Qwen2.5-7B-Instruct", ModelFile{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := engineMux(t, map[string]route{
				"GET /v1/models": {200, string(pipelinetest.ReadFile(t, "testdata/"+tt.models))},
				"GET " + tt.path: {200, string(pipelinetest.ReadFile(t, "testdata/"+tt.props))},
			})
			got := New(Config{BaseURL: srv.URL, Model: tt.model}).Describe(pipelinetest.Context(t)).File
			if got != tt.want {
				t.Errorf("File = %+v, want %+v", got, tt.want)
			}
		})
	}
}
