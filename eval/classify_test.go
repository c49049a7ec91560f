package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

func TestEvaluate_FailureClasses(t *testing.T) {
	const good = `{"date":"2025-03-14","amount":1234.56,"category":"software"}`
	const partial = `{"date":"2025-03-14","amount":12`
	tests := []struct {
		name    string
		output  string
		tr      extractbench.Transport
		failure extractbench.Failure
		detail  string
	}{
		{"complete", good, extractbench.Transport{FinishReason: "stop"}, extractbench.None, ""},
		{"no finish reason", good, extractbench.Transport{}, extractbench.None, ""},

		// memory
		{"vLLM 500 CUDA OOM", "", extractbench.Transport{HTTPStatus: 500, Kind: extractbench.TransportHTTPStatus, ErrorBody: `{"error":{"message":"CUDA out of memory. Tried to allocate 2.00 GiB"}}`}, extractbench.Memory, "out of memory"},
		{"503 OutOfMemoryError", "", extractbench.Transport{HTTPStatus: 503, Kind: extractbench.TransportHTTPStatus, ErrorBody: "torch.OutOfMemoryError: CUDA error"}, extractbench.Memory, "outofmemory"},
		{"503 KV cache", "", extractbench.Transport{HTTPStatus: 503, Kind: extractbench.TransportHTTPStatus, ErrorBody: "No available memory for the KV cache blocks"}, extractbench.Memory, "kv cache"},
		{"500 insufficient memory", "", extractbench.Transport{HTTPStatus: 500, Kind: extractbench.TransportHTTPStatus, ErrorBody: "insufficient memory to load the batch"}, extractbench.Memory, "insufficient memory"},
		{"in-stream OOM error object", `{"date":`, extractbench.Transport{HTTPStatus: 200, Kind: extractbench.TransportMalformed, ErrorBody: `{"error":"out of memory"}`}, extractbench.Memory, "stream's error object"},
		{"engine died, reset", partial, extractbench.Transport{Kind: extractbench.TransportReset, EngineDied: true}, extractbench.Memory, "engine died"},
		{"refused after the engine died", "", extractbench.Transport{Kind: extractbench.TransportRefused, EngineDied: true, Detail: "dial tcp: connection refused"}, extractbench.Memory, "engine died (refused"},
		{"OOM body beats finish_reason=length", partial, extractbench.Transport{HTTPStatus: 200, FinishReason: "length", Kind: extractbench.TransportMalformed, ErrorBody: "CUDA out of memory"}, extractbench.Memory, ""},
		{"engine died beats length", partial, extractbench.Transport{FinishReason: "length", Kind: extractbench.TransportCut, EngineDied: true}, extractbench.Memory, ""},

		// truncation
		{"finish_reason=length", partial, extractbench.Transport{FinishReason: "length"}, extractbench.Truncation, "finish_reason=length"},
		{"answer over the client's cap", partial, extractbench.Transport{HTTPStatus: 200, Kind: extractbench.TransportTooLarge, Detail: "answer passed its 65536-byte cap at content chunk 2"}, extractbench.Truncation, "size cap: answer passed its 65536-byte cap"},
		{"over the cap even when it parses", good, extractbench.Transport{HTTPStatus: 200, Kind: extractbench.TransportTooLarge, FinishReason: "stop"}, extractbench.Truncation, "size cap"},
		{"length and invalid JSON", `{"date": 2025-`, extractbench.Transport{FinishReason: "length"}, extractbench.Truncation, ""},
		{"length even when it parses", good, extractbench.Transport{FinishReason: "length"}, extractbench.Truncation, ""},
		{"vLLM context 400", "", extractbench.Transport{HTTPStatus: 400, Kind: extractbench.TransportHTTPStatus, ErrorBody: `{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8744 in the messages, 256 in the completion).","type":"BadRequestError","code":400}`}, extractbench.Truncation, "maximum context"},
		{"llama.cpp context", "", extractbench.Transport{HTTPStatus: 400, Kind: extractbench.TransportHTTPStatus, ErrorBody: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`}, extractbench.Truncation, "context size"},
		{"TGI 422", "", extractbench.Transport{HTTPStatus: 422, Kind: extractbench.TransportHTTPStatus, ErrorBody: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 8000 `inputs` tokens and 512 `max_new_tokens`"}, extractbench.Truncation, "max_new_tokens"},
		{"OpenAI context_length_exceeded", "", extractbench.Transport{HTTPStatus: 400, Kind: extractbench.TransportHTTPStatus, ErrorBody: `{"error":{"code":"context_length_exceeded"}}`}, extractbench.Truncation, "context_length"},
		{"SGLang context", "", extractbench.Transport{HTTPStatus: 400, Kind: extractbench.TransportHTTPStatus, ErrorBody: "The input (9000 tokens) is longer than the model's context length (8192 tokens)."}, extractbench.Truncation, "context length"},
		{"stream cut mid-object", partial, extractbench.Transport{Kind: extractbench.TransportCut}, extractbench.Truncation, "stream_cut inside the JSON object"},
		{"reset mid-object", "```json\n" + partial, extractbench.Transport{Kind: extractbench.TransportReset}, extractbench.Error, "reset after"},
		{"413 prompt too large", "", extractbench.Transport{HTTPStatus: 413, Kind: extractbench.TransportHTTPStatus, ErrorBody: "Request Entity Too Large"}, extractbench.Truncation, "HTTP 413"},
		{"400 OOM text is not memory", "", extractbench.Transport{HTTPStatus: 400, Kind: extractbench.TransportHTTPStatus, ErrorBody: "out of memory, and the context length is exceeded"}, extractbench.Truncation, ""},

		// error
		{"timeout mid-object", partial, extractbench.Transport{Kind: extractbench.TransportTimeout, Detail: "context deadline exceeded"}, extractbench.Error, "timeout: context deadline exceeded"},
		{"reset with no output", "", extractbench.Transport{Kind: extractbench.TransportReset}, extractbench.Error, "reset with no output"},
		{"cut with no partial JSON", "The answer is", extractbench.Transport{Kind: extractbench.TransportCut}, extractbench.Error, "no partial JSON object"},
		{"cut after a complete object", good, extractbench.Transport{Kind: extractbench.TransportCut}, extractbench.Error, "stream_cut after a complete JSON object, before [DONE]"},
		{"refused, engine alive", "", extractbench.Transport{Kind: extractbench.TransportRefused, Detail: "connection refused"}, extractbench.Error, "refused"},
		{"malformed SSE", good, extractbench.Transport{Kind: extractbench.TransportMalformed, Detail: "data: {bad"}, extractbench.Error, "malformed_sse"},
		{"HTML 200", "", extractbench.Transport{HTTPStatus: 200, Kind: extractbench.TransportContentType, Detail: "text/html"}, extractbench.Error, "content_type"},
		{"503 overloaded without OOM", "", extractbench.Transport{HTTPStatus: 503, Kind: extractbench.TransportHTTPStatus, ErrorBody: "Service Unavailable"}, extractbench.Error, "HTTP 503: Service Unavailable"},
		{"401", "", extractbench.Transport{HTTPStatus: 401, Kind: extractbench.TransportHTTPStatus, ErrorBody: "invalid api key"}, extractbench.Error, "HTTP 401"},
		{"429 too many tokens is not truncation", "", extractbench.Transport{HTTPStatus: 429, Kind: extractbench.TransportHTTPStatus, ErrorBody: "Rate limit: too many tokens per minute"}, extractbench.Error, "HTTP 429"},
		{"status without kind", good, extractbench.Transport{HTTPStatus: 502}, extractbench.Error, "HTTP 502"},
		{"error object after a complete stream", good, extractbench.Transport{ErrorBody: `{"error":"internal"}`}, extractbench.Error, "error object in the stream"},
		{"engine died after completing", good, extractbench.Transport{EngineDied: true}, extractbench.None, ""},

		// format beats quality, truncation beats format
		{"format, not quality", `{"date":"2025-03-15","amount":"1","category":"software"}`, extractbench.Transport{}, extractbench.Format, ""},
		{"quality", `{"date":"2025-03-15","amount":1234.56,"category":"software"}`, extractbench.Transport{}, extractbench.Quality, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Evaluate(tt.output, invoice, tt.tr, Options{})
			if got.Failure != tt.failure {
				t.Errorf("got %q (%s), want %q", got.Failure, got.FailureDetail, tt.failure)
			}
			if !strings.Contains(got.FailureDetail, tt.detail) {
				t.Errorf("got detail %q, want it to contain %q", got.FailureDetail, tt.detail)
			}
			if got.Accepted && tt.tr.Kind != extractbench.TransportOK {
				t.Errorf("accepted with transport %q", tt.tr.Kind)
			}
			if got.Accepted != (tt.failure == extractbench.None) {
				t.Errorf("got Accepted %v, want %v", got.Accepted, tt.failure == extractbench.None)
			}
		})
	}
}

// TestEvaluate_InterruptedIsNotMeasured: a request the run's interruption
// cancelled is neither accepted nor a failure of any class.
func TestEvaluate_InterruptedIsNotMeasured(t *testing.T) {
	got := Evaluate(`{"date":"2025-03-14","amount":1234.56,"category":"software"}`, invoice, extractbench.Transport{Kind: extractbench.TransportInterrupted}, Options{})
	if got.Accepted || got.Failure != extractbench.None || got.FailureDetail != "" {
		t.Errorf("got accepted %v failure %q (%s), want neither", got.Accepted, got.Failure, got.FailureDetail)
	}
}

func TestEvaluate_NeverAcceptedOnTransportFailure(t *testing.T) {
	const good = `{"date":"2025-03-14","amount":1234.56,"category":"software"}`
	kinds := []extractbench.TransportKind{extractbench.TransportHTTPStatus, extractbench.TransportTimeout, extractbench.TransportReset, extractbench.TransportRefused,
		extractbench.TransportMalformed, extractbench.TransportCut, extractbench.TransportContentType, extractbench.TransportTooLarge, extractbench.TransportOther}
	for _, k := range kinds {
		got := Evaluate(good, invoice, extractbench.Transport{Kind: k, FinishReason: "stop"}, Options{})
		if got.Accepted || got.Failure == extractbench.None {
			t.Errorf("%s: got accepted %v failure %q, want a failure", k, got.Accepted, got.Failure)
		}
		// The fields are still scored, for analysis.
		if got.Date != extractbench.TP || !got.StrictParseOK {
			t.Errorf("%s: got date %q strict %v, want the output scored", k, got.Date, got.StrictParseOK)
		}
	}
}

// TestClassify_LlamaCppRuntimeContext is item 3 of the llama.cpp issue:
// llama-server -c 8192 without --parallel (four slots sharing one KV pool)
// failed four long documents sent at once with 500 "Context size has been
// exceeded." (the captures in pipeline/client/testdata/llamacpp, as the
// client reports them: the 500 answer, or the error event inside a 200
// stream, read with the status its code declares), although each fits
// alone. That is the KV cache exhausted under load, memory, so that
// retry_lower runs; the prompt refused at admission (400
// exceed_context_size_error), and older builds' 500 for a prompt over the
// window, stay truncation.
func TestClassify_LlamaCppRuntimeContext(t *testing.T) {
	capture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "pipeline", "client", "testdata", "llamacpp", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	runtime500 := capture("error-runtime-context-500.json")
	inStream := strings.TrimPrefix(strings.TrimSpace(capture("error-runtime-context-stream-first.sse")), "data: ")
	admission := capture("error-context-400.json")
	tests := []struct {
		name    string
		output  string
		tr      extractbench.Transport
		failure extractbench.Failure
		detail  string
	}{
		{"runtime 500 answer", "", extractbench.Transport{HTTPStatus: 500, Kind: extractbench.TransportHTTPStatus, ErrorBody: runtime500}, extractbench.Memory, `HTTP 500 says "context size has been exceeded": the KV cache the engine's slots share ran out under load`},
		{"runtime error in a 200 stream, first event", "", extractbench.Transport{HTTPStatus: 500, Kind: extractbench.TransportHTTPStatus, ErrorBody: inStream}, extractbench.Memory, "ran out under load"},
		{"runtime error in a 200 stream, after content", `{"`, extractbench.Transport{HTTPStatus: 500, Kind: extractbench.TransportHTTPStatus, ErrorBody: inStream}, extractbench.Memory, "ran out under load"},
		{"older builds' KV pool full", "", extractbench.Transport{HTTPStatus: 500, Kind: extractbench.TransportHTTPStatus, ErrorBody: `{"error":{"code":500,"message":"Input prompt is too big compared to KV size. Please try increasing KV size.","type":"server_error"}}`}, extractbench.Memory, "compared to kv size"},
		{"admission 400: over the context window", "", extractbench.Transport{HTTPStatus: 400, Kind: extractbench.TransportHTTPStatus, ErrorBody: admission}, extractbench.Truncation, "context size"},
		{"the runtime message in a 4xx is not memory", "", extractbench.Transport{HTTPStatus: 400, Kind: extractbench.TransportHTTPStatus, ErrorBody: runtime500}, extractbench.Truncation, "context size"},
		{"older builds' 500 for a prompt over the window", "", extractbench.Transport{HTTPStatus: 500, Kind: extractbench.TransportHTTPStatus, ErrorBody: `{"error":{"code":500,"message":"input is larger than the max context size. skipping","type":"server_error"}}`}, extractbench.Truncation, "context size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, detail := classifyTransport(tt.tr, tt.output)
			if got != tt.failure || !strings.Contains(detail, tt.detail) {
				t.Errorf("classifyTransport = %q %q, want %q with %q", got, detail, tt.failure, tt.detail)
			}
		})
	}
}
