package builtin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// chatRequest is the part of an OpenAI chat completion request the engine reads.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	Seed                *int64          `json:"seed"`
	N                   *int            `json:"n"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	ResponseFormat      json.RawMessage `json:"response_format"` // a json_schema other than the default's declares the fields (declared.go)
}

// completionRequest is the part of an OpenAI (legacy) completion request the
// engine reads. Prompt is a string or a list of strings (a batch).
type completionRequest struct {
	Model          string          `json:"model"`
	Prompt         json.RawMessage `json:"prompt"`
	MaxTokens      *int            `json:"max_tokens"`
	Temperature    *float64        `json:"temperature"`
	Seed           *int64          `json:"seed"`
	N              *int            `json:"n"`
	Stream         bool            `json:"stream"`
	StreamOptions  *streamOptions  `json:"stream_options"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	// ContinuousUsage (vLLM's continuous_usage_stats) puts each choice's own
	// usage so far on every chunk of that choice: how a client learns the
	// token counts of each prompt of a batch.
	ContinuousUsage bool `json:"continuous_usage_stats"`
}

// chatMessage accepts content as a string or as a list of text parts.
type chatMessage struct {
	Role    string      `json:"role"`
	Content messageText `json:"content"`
}

type messageText string

// UnmarshalJSON reads a string, null, or [{"type":"text","text":...}, ...].
func (m *messageText) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != nil {
			*m = messageText(*s)
		}
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("content: want a string or a list of text parts: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			sb.WriteString(p.Text)
		}
	}
	*m = messageText(sb.String())
	return nil
}

// prompts returns the prompt of a completion request as a list.
func (r completionRequest) prompts() ([]string, error) {
	var one string
	if err := json.Unmarshal(r.Prompt, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(r.Prompt, &many); err != nil || len(many) == 0 {
		return nil, fmt.Errorf("prompt: want a string or a non-empty list of strings")
	}
	return many, nil
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type chatChoice struct {
	Index        int          `json:"index"`
	Message      *chatMessage `json:"message,omitempty"`
	Delta        *chatDelta   `json:"delta,omitempty"`
	Logprobs     *struct{}    `json:"logprobs"`
	FinishReason *string      `json:"finish_reason"`
}

type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type textChoice struct {
	Index        int       `json:"index"`
	Text         string    `json:"text"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// response is a completion, a chat completion or one of their stream chunks.
// Usage is a pointer to a pointer so that a chunk can say "usage": null
// (include_usage asks for it) or leave the key out.
type response struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices any    `json:"choices"`
	Usage   any    `json:"usage,omitempty"`
}

// nullUsage marshals as JSON null where include_usage asks every chunk for a usage key.
type nullUsage struct{}

func (nullUsage) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// apiError is vLLM's error object, sent as the whole body of a non-2xx
// answer: {"object":"error","message":...,"type":...,"param":null,"code":400}.
type apiError struct {
	Object  string  `json:"object"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

func newAPIError(code int, typ, format string, args ...any) *apiError {
	return &apiError{Object: "error", Message: fmt.Sprintf(format, args...), Type: typ, Code: code}
}

// errContextLength is vLLM's answer to a prompt plus max_tokens that
// exceeds the context window.
func errContextLength(window, prompt, completion int) *apiError {
	return newAPIError(http.StatusBadRequest, "BadRequestError",
		"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
		window, prompt+completion, prompt, completion)
}

// errModelNotFound is vLLM's answer to a model name it does not serve.
func errModelNotFound(model string) *apiError {
	return newAPIError(http.StatusNotFound, "NotFoundError", "The model `%s` does not exist.", model)
}

// errBadRequest is a malformed request body or parameter.
func errBadRequest(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, "BadRequestError", format, args...)
}

// errShuttingDown answers the requests in flight when the engine stops.
func errShuttingDown() *apiError {
	return newAPIError(http.StatusServiceUnavailable, "ServiceUnavailableError", "the engine is shutting down")
}

// errCUDAOOM is the 500 a crashed forward pass gives: PyTorch's message,
// which every OOM classifier looks for.
func errCUDAOOM(p Profile, code int, typ, detail string) *apiError {
	gib := float64(p.GPUMemoryBytes) / (1 << 30)
	return newAPIError(code, typ,
		"CUDA out of memory. Tried to allocate %.2f MiB. GPU 0 has a total capacity of %.2f GiB of which 0 bytes is free. %s",
		float64(p.KVBytesPerToken()*int64(p.BlockSize))/(1<<20), gib, detail)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Code, e)
}

// sse writes server-sent events: "data: <json>\n\n". Events are written
// into the response's buffer and flushed by flush, which the stream calls
// when no further event is ready: a token is on the wire as soon as the
// handler has nothing else to write, and tokens the scheduler produced
// together (at zero modelled latency) share one socket write.
type sse struct {
	w       http.ResponseWriter
	flusher http.Flusher
	started bool
	pending bool   // written since the last flush
	buf     []byte // the event being written, reused
}

func (s *sse) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
}

// line returns the reused buffer holding "data: ", to append a chunk to
// and hand to write.
func (s *sse) line() []byte {
	s.buf = append(s.buf[:0], "data: "...)
	return s.buf
}

// write ends the event started by line and writes it, unflushed.
func (s *sse) write(b []byte) error {
	s.start()
	s.buf = append(b, '\n', '\n')
	s.pending = true
	if _, err := s.w.Write(s.buf); err != nil {
		return fmt.Errorf("write chunk: %w", err)
	}
	return nil
}

// send writes v as one event, unflushed.
func (s *sse) send(v any) error {
	s.start()
	b, err := appendMarshal(s.line(), v)
	if err != nil {
		return fmt.Errorf("marshal chunk: %w", err)
	}
	return s.write(b)
}

// flush sends what was written since the last flush.
func (s *sse) flush() {
	if s.pending && s.flusher != nil {
		s.flusher.Flush()
	}
	s.pending = false
}

// done writes the [DONE] sentinel. It does not flush: the handler returns
// right after, and the server then flushes it together with the end of the
// chunked body, in one write instead of two.
func (s *sse) done() {
	s.start()
	s.w.Write([]byte("data: [DONE]\n\n"))
}

func strPtr(s string) *string { return &s }
