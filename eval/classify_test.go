package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvaluate_FailureClasses(t *testing.T) {
	const good = `{"date":"2025-03-14","amount":1234.56,"category":"software"}`
	const partial = `{"date":"2025-03-14","amount":12`
	tests := []struct {
		name    string
		output  string
		tr      Transport
		failure Failure
		detail  string
	}{
		{"complete", good, Transport{FinishReason: "stop"}, None, ""},
		{"no finish reason", good, Transport{}, None, ""},

		// memory
		{"vLLM 500 CUDA OOM", "", Transport{HTTPStatus: 500, Kind: TransportHTTPStatus, ErrorBody: `{"error":{"message":"CUDA out of memory. Tried to allocate 2.00 GiB"}}`}, Memory, "out of memory"},
		{"503 OutOfMemoryError", "", Transport{HTTPStatus: 503, Kind: TransportHTTPStatus, ErrorBody: "torch.OutOfMemoryError: CUDA error"}, Memory, "outofmemory"},
		{"503 KV cache", "", Transport{HTTPStatus: 503, Kind: TransportHTTPStatus, ErrorBody: "No available memory for the KV cache blocks"}, Memory, "kv cache"},
		{"500 insufficient memory", "", Transport{HTTPStatus: 500, Kind: TransportHTTPStatus, ErrorBody: "insufficient memory to load the batch"}, Memory, "insufficient memory"},
		{"in-stream OOM error object", `{"date":`, Transport{HTTPStatus: 200, Kind: TransportMalformed, ErrorBody: `{"error":"out of memory"}`}, Memory, "stream's error object"},
		{"engine died, reset", partial, Transport{Kind: TransportReset, EngineDied: true}, Memory, "engine died"},
		{"refused after the engine died", "", Transport{Kind: TransportRefused, EngineDied: true, Detail: "dial tcp: connection refused"}, Memory, "engine died (refused"},
		{"OOM body beats finish_reason=length", partial, Transport{HTTPStatus: 200, FinishReason: "length", Kind: TransportMalformed, ErrorBody: "CUDA out of memory"}, Memory, ""},
		{"engine died beats length", partial, Transport{FinishReason: "length", Kind: TransportCut, EngineDied: true}, Memory, ""},

		// truncation
		{"finish_reason=length", partial, Transport{FinishReason: "length"}, Truncation, "finish_reason=length"},
		{"answer over the client's cap", partial, Transport{HTTPStatus: 200, Kind: TransportTooLarge, Detail: "answer passed its 65536-byte cap at content chunk 2"}, Truncation, "size cap: answer passed its 65536-byte cap"},
		{"over the cap even when it parses", good, Transport{HTTPStatus: 200, Kind: TransportTooLarge, FinishReason: "stop"}, Truncation, "size cap"},
		{"length and invalid JSON", `{"date": 2025-`, Transport{FinishReason: "length"}, Truncation, ""},
		{"length even when it parses", good, Transport{FinishReason: "length"}, Truncation, ""},
		{"vLLM context 400", "", Transport{HTTPStatus: 400, Kind: TransportHTTPStatus, ErrorBody: `{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8744 in the messages, 256 in the completion).","type":"BadRequestError","code":400}`}, Truncation, "maximum context"},
		{"llama.cpp context", "", Transport{HTTPStatus: 400, Kind: TransportHTTPStatus, ErrorBody: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`}, Truncation, "context size"},
		{"TGI 422", "", Transport{HTTPStatus: 422, Kind: TransportHTTPStatus, ErrorBody: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 8000 `inputs` tokens and 512 `max_new_tokens`"}, Truncation, "max_new_tokens"},
		{"OpenAI context_length_exceeded", "", Transport{HTTPStatus: 400, Kind: TransportHTTPStatus, ErrorBody: `{"error":{"code":"context_length_exceeded"}}`}, Truncation, "context_length"},
		{"SGLang context", "", Transport{HTTPStatus: 400, Kind: TransportHTTPStatus, ErrorBody: "The input (9000 tokens) is longer than the model's context length (8192 tokens)."}, Truncation, "context length"},
		{"stream cut mid-object", partial, Transport{Kind: TransportCut}, Truncation, "stream_cut inside the JSON object"},
		{"reset mid-object", "```json\n" + partial, Transport{Kind: TransportReset}, Error, "reset after"},
		{"413 prompt too large", "", Transport{HTTPStatus: 413, Kind: TransportHTTPStatus, ErrorBody: "Request Entity Too Large"}, Truncation, "HTTP 413"},
		{"400 OOM text is not memory", "", Transport{HTTPStatus: 400, Kind: TransportHTTPStatus, ErrorBody: "out of memory, and the context length is exceeded"}, Truncation, ""},

		// error
		{"timeout mid-object", partial, Transport{Kind: TransportTimeout, Detail: "context deadline exceeded"}, Error, "timeout: context deadline exceeded"},
		{"reset with no output", "", Transport{Kind: TransportReset}, Error, "reset with no output"},
		{"cut with no partial JSON", "The answer is", Transport{Kind: TransportCut}, Error, "no partial JSON object"},
		{"cut after a complete object", good, Transport{Kind: TransportCut}, Error, "stream_cut after a complete JSON object, before [DONE]"},
		{"refused, engine alive", "", Transport{Kind: TransportRefused, Detail: "connection refused"}, Error, "refused"},
		{"malformed SSE", good, Transport{Kind: TransportMalformed, Detail: "data: {bad"}, Error, "malformed_sse"},
		{"HTML 200", "", Transport{HTTPStatus: 200, Kind: TransportContentType, Detail: "text/html"}, Error, "content_type"},
		{"503 overloaded without OOM", "", Transport{HTTPStatus: 503, Kind: TransportHTTPStatus, ErrorBody: "Service Unavailable"}, Error, "HTTP 503: Service Unavailable"},
		{"401", "", Transport{HTTPStatus: 401, Kind: TransportHTTPStatus, ErrorBody: "invalid api key"}, Error, "HTTP 401"},
		{"429 too many tokens is not truncation", "", Transport{HTTPStatus: 429, Kind: TransportHTTPStatus, ErrorBody: "Rate limit: too many tokens per minute"}, Error, "HTTP 429"},
		{"status without kind", good, Transport{HTTPStatus: 502}, Error, "HTTP 502"},
		{"error object after a complete stream", good, Transport{ErrorBody: `{"error":"internal"}`}, Error, "error object in the stream"},
		{"engine died after completing", good, Transport{EngineDied: true}, None, ""},

		// format beats quality, truncation beats format
		{"format, not quality", `{"date":"2025-03-15","amount":"1","category":"software"}`, Transport{}, Format, ""},
		{"quality", `{"date":"2025-03-15","amount":1234.56,"category":"software"}`, Transport{}, Quality, ""},
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
			if got.Accepted && tt.tr.Kind != TransportOK {
				t.Errorf("accepted with transport %q", tt.tr.Kind)
			}
			if got.Accepted != (tt.failure == None) {
				t.Errorf("got Accepted %v, want %v", got.Accepted, tt.failure == None)
			}
		})
	}
}

// TestEvaluate_InterruptedIsNotMeasured: a request the run's interruption
// cancelled is neither accepted nor a failure of any class.
func TestEvaluate_InterruptedIsNotMeasured(t *testing.T) {
	got := Evaluate(`{"date":"2025-03-14","amount":1234.56,"category":"software"}`, invoice, Transport{Kind: TransportInterrupted}, Options{})
	if got.Accepted || got.Failure != None || got.FailureDetail != "" {
		t.Errorf("got accepted %v failure %q (%s), want neither", got.Accepted, got.Failure, got.FailureDetail)
	}
}

func TestEvaluate_NeverAcceptedOnTransportFailure(t *testing.T) {
	const good = `{"date":"2025-03-14","amount":1234.56,"category":"software"}`
	kinds := []TransportKind{TransportHTTPStatus, TransportTimeout, TransportReset, TransportRefused,
		TransportMalformed, TransportCut, TransportContentType, TransportTooLarge, TransportOther}
	for _, k := range kinds {
		got := Evaluate(good, invoice, Transport{Kind: k, FinishReason: "stop"}, Options{})
		if got.Accepted || got.Failure == None {
			t.Errorf("%s: got accepted %v failure %q, want a failure", k, got.Accepted, got.Failure)
		}
		// The fields are still scored, for analysis.
		if got.Date != TP || !got.StrictParseOK {
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
		tr      Transport
		failure Failure
		detail  string
	}{
		{"runtime 500 answer", "", Transport{HTTPStatus: 500, Kind: TransportHTTPStatus, ErrorBody: runtime500}, Memory, `HTTP 500 says "context size has been exceeded": the KV cache the engine's slots share ran out under load`},
		{"runtime error in a 200 stream, first event", "", Transport{HTTPStatus: 500, Kind: TransportHTTPStatus, ErrorBody: inStream}, Memory, "ran out under load"},
		{"runtime error in a 200 stream, after content", `{"`, Transport{HTTPStatus: 500, Kind: TransportHTTPStatus, ErrorBody: inStream}, Memory, "ran out under load"},
		{"older builds' KV pool full", "", Transport{HTTPStatus: 500, Kind: TransportHTTPStatus, ErrorBody: `{"error":{"code":500,"message":"Input prompt is too big compared to KV size. Please try increasing KV size.","type":"server_error"}}`}, Memory, "compared to kv size"},
		{"admission 400: over the context window", "", Transport{HTTPStatus: 400, Kind: TransportHTTPStatus, ErrorBody: admission}, Truncation, "context size"},
		{"the runtime message in a 4xx is not memory", "", Transport{HTTPStatus: 400, Kind: TransportHTTPStatus, ErrorBody: runtime500}, Truncation, "context size"},
		{"older builds' 500 for a prompt over the window", "", Transport{HTTPStatus: 500, Kind: TransportHTTPStatus, ErrorBody: `{"error":{"code":500,"message":"input is larger than the max context size. skipping","type":"server_error"}}`}, Truncation, "context size"},
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
