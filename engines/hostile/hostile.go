// Package hostile is an OpenAI-compatible engine that misbehaves on purpose:
// one Mode per attack a real engine (or a faulty network, or a hostile
// operator) can make on a benchmark. Tests start one with New and point a
// run, the client or a merge at it; what the tool must do against each mode
// is asserted by the test that uses it, never here.
//
// Every mode answers the paths a run touches (chat completions, /health,
// /v1/models, /metrics, /version). Unless the mode says otherwise a request
// gets Answer as one streamed chunk, usage, then [DONE]. The modes live in
// files by area (transport.go, stream.go, …), each registering itself in
// init, so that Modes lists all of them.
package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
)

// Mode names one attack.
type Mode string

// Normal is the well-behaved engine every mode departs from.
const Normal Mode = "normal"

// Answer is what a well-behaved request gets: a valid extraction.
const Answer = `{"date":null,"amount":null,"category":"other"}`

// Model is the served model name.
const Model = "hostile"

// Options tune a mode.
type Options struct {
	// APIKey, when set, is required as a Bearer token; some modes echo it.
	APIKey string
	// N is a mode's own count (in flight before 429, bytes, …); 0 for its default.
	N int
}

// Server is a running hostile engine.
type Server struct {
	*httptest.Server
	Mode Mode
	// Requests counts the chat/completion requests received.
	Requests atomic.Int64
}

type builder func(s *Server, o Options) http.Handler

var (
	mu    sync.Mutex
	modes = map[Mode]builder{}
)

// register adds a mode; a name used twice is a programming error.
func register(m Mode, b builder) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := modes[m]; dup {
		panic(fmt.Sprintf("hostile: mode %q registered twice", m))
	}
	modes[m] = b
}

// Modes returns every registered mode, sorted.
func Modes() []Mode {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Mode, 0, len(modes))
	for m := range modes {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// New starts the engine in mode m. The caller closes it.
func New(m Mode, o Options) (*Server, error) {
	mu.Lock()
	b, ok := modes[m]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("hostile: no mode %q", m)
	}
	s := &Server{Mode: m}
	s.Server = httptest.NewUnstartedServer(nil)
	s.Server.Config.Handler = b(s, o)
	s.Start()
	return s, nil
}

// MustNew is New for tests: it fails tb on an unknown mode and closes the
// server at the end of the test.
func MustNew(tb interface {
	Helper()
	Fatal(...any)
	Cleanup(func())
}, m Mode, o Options) *Server {
	tb.Helper()
	s, err := New(m, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

func init() {
	register(Normal, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) { StreamAnswer(w, Answer) })
	})
}

// Base is the engine's mux with chat (and completions) answered by chat;
// every other path a run touches answers as a well-behaved engine would.
// Modes that attack elsewhere build their own mux from BaseMux.
func Base(s *Server, o Options, chat http.HandlerFunc) http.Handler {
	mux := BaseMux(o)
	h := func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if !authorized(o, w, r) {
			return
		}
		chat(w, r)
	}
	mux.HandleFunc("POST /v1/chat/completions", h)
	mux.HandleFunc("POST /v1/completions", h)
	return mux
}

// BaseMux answers the metadata paths (health, models, metrics, version).
func BaseMux(o Options) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{"id": Model, "object": "model"}}})
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]any{"version": "hostile-1"})
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 0\n")
	})
	return mux
}

func authorized(o Options, w http.ResponseWriter, r *http.Request) bool {
	if o.APIKey == "" || r.Header.Get("Authorization") == "Bearer "+o.APIKey {
		return true
	}
	WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "bad key", "code": 401}})
	return false
}

// WriteJSON writes v as a JSON body with status code.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// SSEHeaders starts an event stream.
func SSEHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// Chunk is one chat.completion.chunk event carrying content.
func Chunk(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-hostile", "object": "chat.completion.chunk", "created": 1, "model": Model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}},
	})
	return "data: " + string(b) + "\n\n"
}

// Final is the closing chunk with finish_reason stop and usage.
func Final(promptTokens, completionTokens int) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-hostile", "object": "chat.completion.chunk", "created": 1, "model": Model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": promptTokens, "completion_tokens": completionTokens, "total_tokens": promptTokens + completionTokens},
	})
	return "data: " + string(b) + "\n\n"
}

// Done is the stream's end marker.
const Done = "data: [DONE]\n\n"

// StreamAnswer writes a whole well-formed stream whose content is answer.
func StreamAnswer(w http.ResponseWriter, answer string) {
	SSEHeaders(w)
	fmt.Fprint(w, Chunk(answer))
	fmt.Fprint(w, Final(10, 12))
	fmt.Fprint(w, Done)
}

// Flush flushes w when it can.
func Flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
