package eval

import (
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
)

// oomMarkers are lower-case fragments of the out-of-memory messages engines
// send in an HTTP 5xx body or an in-stream error object: PyTorch ("CUDA out of
// memory", "torch.OutOfMemoryError"), vLLM and SGLang (KV cache exhaustion),
// llama.cpp ("failed to allocate", "insufficient memory"), ROCm
// ("hipErrorOutOfMemory"), cuBLAS.
var oomMarkers = []string{
	"out of memory",
	"outofmemory",
	"insufficient memory",
	"not enough memory",
	"kv cache",
	"failed to allocate",
	"cublas_status_alloc_failed",
}

// kvPoolMarkers are lower-case fragments of llama.cpp's runtime failure
// when llama_decode finds no room for a batch of one token in a KV cache
// its slots share (one unified pool, -c without --parallel, or
// --kv-unified): every request then in flight fails, each of which was
// admitted, so fits the context window alone. It is memory exhausted under
// load, not a prompt over the window, which llama.cpp refuses at once with
// HTTP 400 exceed_context_size_error:
//
//	server-context.cpp (2025 on)  500 server_error "Context size has been exceeded."
//	server.cpp (before)           500 "Input prompt is too big compared to KV size. Please try increasing KV size."
var kvPoolMarkers = []string{
	"context size has been exceeded",
	"compared to kv size",
}

// contextMarkers are lower-case fragments of the errors engines answer when
// the prompt does not fit the context window:
//
//	vLLM      "This model's maximum context length is N tokens. However, you requested M tokens"
//	vLLM      "... is longer than the maximum model length of N"
//	SGLang    "The input (N tokens) is longer than the model's context length (M tokens)"
//	llama.cpp "the request exceeds the available context size, try increasing it" (exceed_context_size_error)
//	TGI       "Input validation error: `inputs` tokens + `max_new_tokens` must be <= N"
//	TGI       "Input validation error: `inputs` must have less than N tokens"
//	OpenAI    "context_length_exceeded"
//
// "too many tokens" is deliberately absent: rate limiters say it too.
var contextMarkers = []string{
	"maximum context",
	"context length",
	"context_length",
	"context window",
	"context size",
	"maximum model length",
	"max_model_len",
	"`inputs` tokens + `max_new_tokens`",
	"`inputs` must have less than",
}

// classifyTransport applies the part of MEASUREMENT.md section 6 that needs
// no parsing (memory, then truncation, then transport errors); None means the
// output is judged on its content. Where the rules leave room: a 4xx is the
// client's fault, never memory; llama.cpp's "Context size has been exceeded"
// on an admitted request is memory (the prompt fit, the shared KV cache ran
// out); a reset or timeout mid-object is error, since the connection or our
// clock cut it, not the engine.
func classifyTransport(tr extractbench.Transport, output string) (extractbench.Failure, string) {
	if !tr.Kind.Measured() {
		return extractbench.None, "" // the run or the client cut it, not the engine: no class at all (Evaluate says not measured)
	}
	body := strings.ToLower(tr.ErrorBody)
	failed := tr.Kind != extractbench.TransportOK
	if tr.EngineDied && failed {
		return extractbench.Memory, "engine died (" + transportWhat(tr) + ")"
	}
	if tr.ErrorBody != "" && (tr.HTTPStatus >= 500 || tr.HTTPStatus < 300) {
		if m := firstMarker(body, oomMarkers); m != "" {
			return extractbench.Memory, fmt.Sprintf("%s says %q", transportWhere(tr), m)
		}
		if m := firstMarker(body, kvPoolMarkers); m != "" {
			return extractbench.Memory, fmt.Sprintf("%s says %q: the KV cache the engine's slots share ran out under load (the prompt was admitted, so it fits the context window; one that does not is refused at once with HTTP 400)", transportWhere(tr), m)
		}
	}
	if tr.FinishReason == "length" {
		return extractbench.Truncation, "finish_reason=length"
	}
	if tr.Kind == extractbench.TransportTooLarge {
		return extractbench.Truncation, "answer cut at the client's size cap: " + clip(tr.Detail)
	}
	if tr.ErrorBody != "" {
		if m := firstMarker(body, contextMarkers); m != "" {
			return extractbench.Truncation, fmt.Sprintf("prompt exceeds the context window: %s says %q", transportWhere(tr), m)
		}
	}
	if tr.HTTPStatus == 413 {
		// Payload Too Large: the engine (or its proxy) rejected the prompt
		// for its size, which is the context window's rule at the door.
		return extractbench.Truncation, "prompt rejected as too large: HTTP 413"
	}
	if tr.Kind == extractbench.TransportCut && EndsInsideObject(output) {
		return extractbench.Truncation, string(tr.Kind) + " inside the JSON object"
	}
	switch {
	case tr.Kind == extractbench.TransportCut || tr.Kind == extractbench.TransportReset:
		if strings.TrimSpace(output) == "" {
			return extractbench.Error, string(tr.Kind) + " with no output"
		}
		if tr.Kind == extractbench.TransportReset {
			return extractbench.Error, fmt.Sprintf("reset after %d bytes of output", len(output))
		}
		if _, err := findObject(output); err == nil {
			return extractbench.Error, string(tr.Kind) + " after a complete JSON object, before [DONE]"
		}
		return extractbench.Error, string(tr.Kind) + " with no partial JSON object"
	case failed:
		return extractbench.Error, transportWhat(tr)
	case tr.HTTPStatus != 0 && (tr.HTTPStatus < 200 || tr.HTTPStatus >= 300):
		return extractbench.Error, transportWhat(tr)
	case tr.ErrorBody != "":
		return extractbench.Error, "error object in the stream: " + clip(tr.ErrorBody)
	}
	return extractbench.None, ""
}

// transportWhat describes a failed exchange in a few words.
func transportWhat(tr extractbench.Transport) string {
	var b strings.Builder
	if tr.Kind != extractbench.TransportOK {
		b.WriteString(string(tr.Kind))
	}
	if tr.HTTPStatus != 0 && (tr.HTTPStatus < 200 || tr.HTTPStatus >= 300) {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "HTTP %d", tr.HTTPStatus)
		if tr.ErrorBody != "" {
			b.WriteString(": " + clip(tr.ErrorBody))
		}
	}
	if tr.Detail != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(clip(tr.Detail))
	}
	if b.Len() == 0 {
		return "transport failure"
	}
	return b.String()
}

// transportWhere names where an error text came from.
func transportWhere(tr extractbench.Transport) string {
	if tr.HTTPStatus >= 300 || (tr.HTTPStatus != 0 && tr.HTTPStatus < 200) {
		return fmt.Sprintf("HTTP %d", tr.HTTPStatus)
	}
	return "the stream's error object"
}

// firstMarker returns the first marker found in the lower-cased text.
func firstMarker(lower string, markers []string) string {
	for _, m := range markers {
		if strings.Contains(lower, m) {
			return m
		}
	}
	return ""
}
