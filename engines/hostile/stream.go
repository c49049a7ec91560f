package hostile

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The stream modes attack how a client reads one answer: its size (an
// engine that never stops), its framing (line endings, a close before
// [DONE], compression the client did not ask for) and the error frames
// engines write inside a 200 stream, each in the shape the engine's own
// source writes it.
const (
	// SSEEndlessChunks streams valid 64 KiB content chunks without end
	// (N > 0: N chunks, then a normal finish).
	SSEEndlessChunks Mode = "sse-endless-chunks"
	// SSEEndlessLine streams 4 MiB data: lines with no blank line, so that
	// one event never ends (N > 0: N lines, then a blank line and [DONE]).
	SSEEndlessLine Mode = "sse-endless-line"
	// SSEHugeJSON answers with one non-streamed chat.completion whose
	// content is 100 MB (N > 0: N bytes of content).
	SSEHugeJSON Mode = "sse-huge-json"

	// SSEBareCR ends every line of a well-formed stream with a bare CR,
	// which WHATWG's event-stream grammar allows beside LF and CRLF.
	SSEBareCR Mode = "sse-bare-cr"
	// SSEGzip gzips a well-formed stream and says so (Content-Encoding:
	// gzip), whatever the request's Accept-Encoding.
	SSEGzip Mode = "sse-gzip"
	// SSENoDone sends the whole answer in one complete chunk and closes
	// the stream without [DONE].
	SSENoDone Mode = "sse-no-done"

	// SSELlamaCppContextError is llama.cpp's server.cpp (before the server
	// was split into server-context.cpp) failing a task whose prompt does
	// not fit: "error: {json}" (server_sent_event(sink, "error", ...)), then
	// data: [DONE].
	SSELlamaCppContextError Mode = "sse-llamacpp-context-error"
	// SSELlamaCppOOMError is the same frame for a failed decode whose
	// message says out of memory.
	SSELlamaCppOOMError Mode = "sse-llamacpp-oom-error"
	// SSELlamaCppDataContextError is today's llama.cpp failing a task mid
	// stream: data: {"error": {json}} (format_oai_sse), then the stream ends.
	SSELlamaCppDataContextError Mode = "sse-llamacpp-data-context-error"
	// SSELlamaCpp400Context is llama.cpp refusing the prompt before any
	// stream: HTTP 400 with the error object and n_prompt_tokens.
	SSELlamaCpp400Context Mode = "sse-llamacpp-400-context"
	// SSEEventErrorText is an "event: error" whose data is plain text
	// naming an out-of-memory failure.
	SSEEventErrorText Mode = "sse-event-error-text"
	// SSEVLLMError is vLLM's (and SGLang's) in-stream error:
	// data: {"error": {"message", "type", "param", "code": 500}}, then [DONE].
	SSEVLLMError Mode = "sse-vllm-error"
	// SSEVLLMFlatError is an error object standing alone in a data line,
	// {"object": "error", ...}: vLLM's ErrorResponse as its non-streamed
	// answers write it, streamed as is, then [DONE].
	SSEVLLMFlatError Mode = "sse-vllm-flat-error"
)

// ContentChunk is the content size of one SSEEndlessChunks chunk.
const ContentChunk = 64 << 10

// EndlessLine is the length of one SSEEndlessLine data line.
const EndlessLine = 4 << 20

// HugeBody is the content size of SSEHugeJSON's answer.
const HugeBody = 100 << 20

// PromptTokens is the prompt size the llama.cpp context errors name
// (n_prompt_tokens), and ContextSize the context they name (n_ctx).
const (
	PromptTokens = 4476
	ContextSize  = 4096
)

// llamaCppContextError is what llama.cpp's server_task_result_error::to_json
// writes for ERROR_TYPE_EXCEED_CONTEXT_SIZE (format_error_response, then
// n_prompt_tokens and n_ctx), with the message send_error gives it.
var llamaCppContextError = fmt.Sprintf(`{"code":400,"message":"request (%d tokens) exceeds the available context size (%d tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":%d,"n_ctx":%d}`,
	PromptTokens, ContextSize, PromptTokens, ContextSize)

func init() {
	register(SSEEndlessChunks, func(s *Server, o Options) http.Handler {
		ev := Chunk(strings.Repeat("x", ContentChunk))
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			for i := 0; o.N <= 0 || i < o.N; i++ {
				if _, err := io.WriteString(w, ev); err != nil {
					return // the client went away
				}
				Flush(w)
			}
			fmt.Fprint(w, Final(10, o.N), Done)
		})
	})
	register(SSEEndlessLine, func(s *Server, o Options) http.Handler {
		line := "data: " + strings.Repeat("x", EndlessLine-len("data: \n")) + "\n"
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			for i := 0; o.N <= 0 || i < o.N; i++ {
				if _, err := io.WriteString(w, line); err != nil {
					return
				}
				Flush(w)
			}
			fmt.Fprint(w, "\n", Done)
		})
	})
	register(SSEHugeJSON, func(s *Server, o Options) http.Handler {
		size := HugeBody
		if o.N > 0 {
			size = o.N
		}
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, `{"id":"chatcmpl-hostile","object":"chat.completion","created":1,"model":"`+Model+`","choices":[{"index":0,"message":{"role":"assistant","content":"`)
			block := strings.Repeat("x", 64<<10)
			for left := size; left > 0; left -= len(block) {
				if _, err := io.WriteString(w, block[:min(left, len(block))]); err != nil {
					return
				}
			}
			fmt.Fprint(w, `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":12,"total_tokens":22}}`)
		})
	})

	register(SSEBareCR, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			stream := ": ping\n\n" + Chunk(Answer) + Final(10, 12) + Done
			fmt.Fprint(w, strings.ReplaceAll(stream, "\n", "\r"))
		})
	})
	register(SSEGzip, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusOK)
			zw := gzip.NewWriter(w)
			fmt.Fprint(zw, Chunk(Answer), Final(10, 12), Done)
			zw.Close()
		})
	})
	register(SSENoDone, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			fmt.Fprint(w, Chunk(Answer))
		})
	})

	register(SSELlamaCppContextError, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			fmt.Fprint(w, "error: "+llamaCppContextError+"\n\n", Done)
		})
	})
	register(SSELlamaCppOOMError, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			fmt.Fprint(w, Chunk(`{"date": `))
			fmt.Fprint(w, `error: {"code":500,"message":"failed to decode the batch: out of memory","type":"server_error"}`+"\n\n", Done)
		})
	})
	register(SSELlamaCppDataContextError, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			fmt.Fprint(w, `data: {"error":`+llamaCppContextError+"}\n\n")
		})
	})
	register(SSELlamaCpp400Context, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":`+llamaCppContextError+"}")
		})
	})
	register(SSEEventErrorText, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			fmt.Fprint(w, "event: error\ndata: CUDA out of memory. Tried to allocate 2.00 GiB\n\n")
		})
	})
	register(SSEVLLMError, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			b, _ := json.Marshal(map[string]any{"error": map[string]any{
				"message": "CUDA out of memory. Tried to allocate 2.00 GiB", "type": "InternalServerError", "param": nil, "code": 500}})
			fmt.Fprint(w, Chunk(`{"date": `), "data: "+string(b)+"\n\n", Done)
		})
	})
	register(SSEVLLMFlatError, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			fmt.Fprint(w, `data: {"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 4610 tokens (4098 in the messages, 512 in the completion).","type":"BadRequestError","param":null,"code":400}`+"\n\n", Done)
		})
	})
}
