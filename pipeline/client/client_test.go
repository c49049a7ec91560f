package client

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// replayServer answers every POST with the bytes of a stream file.
func replayServer(t *testing.T, contentType string, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// observed is the part of a Response that does not depend on timing, plus
// the order facts the timings must satisfy; it is what golden files hold.
type observed struct {
	Output           string                     `json:"output"`
	FinishReason     string                     `json:"finish_reason"`
	PromptTokens     int                        `json:"prompt_tokens"`
	CompletionTokens int                        `json:"completion_tokens"`
	UsageReported    bool                       `json:"usage_reported"`
	CachedTokens     *int                       `json:"cached_prompt_tokens,omitempty"`
	Kind             extractbench.TransportKind `json:"kind"`
	HTTPStatus       int                        `json:"http_status"`
	ErrorBody        string                     `json:"error_body,omitempty"`
	Detail           string                     `json:"detail,omitempty"`
	HasFirstToken    bool                       `json:"has_first_token"`
}

func observe(t *testing.T, r extractbench.Response) observed {
	t.Helper()
	checkTimingOrder(t, r)
	return observed{
		Output: r.Output, FinishReason: r.FinishReason,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, UsageReported: r.UsageReported,
		CachedTokens: r.CachedPromptTokens,
		Kind:         r.Kind, HTTPStatus: r.HTTPStatus, ErrorBody: r.ErrorBody, Detail: r.Detail,
		HasFirstToken: r.FirstTokenNS != 0,
	}
}

// checkTimingOrder checks sched <= send <= first byte <= first token <=
// last token <= done for the instants that happened.
func checkTimingOrder(t *testing.T, r extractbench.Response) {
	t.Helper()
	seq := []struct {
		name string
		v    int64
	}{{"sched", r.SchedNS}, {"send", r.SendNS}, {"first byte", r.FirstByteNS}, {"first token", r.FirstTokenNS}, {"last token", r.LastTokenNS}, {"done", r.DoneNS}}
	prev := seq[0]
	for _, s := range seq[1:] {
		if s.v == 0 {
			continue
		}
		if s.v < prev.v {
			t.Errorf("%s (%d) before %s (%d)", s.name, s.v, prev.name, prev.v)
		}
		prev = s
	}
	if r.DoneNS == 0 {
		t.Error("done instant not recorded")
	}
	if (r.FirstTokenNS == 0) != (r.LastTokenNS == 0) {
		t.Errorf("first token %d and last token %d: one without the other", r.FirstTokenNS, r.LastTokenNS)
	}
}

func checkGolden(t *testing.T, path string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := pipelinetest.ReadFile(t, path)
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs (run with -update if intended)\ngot:\n%s\nwant:\n%s", path, b, want)
	}
}

// TestClient_ChatReplay replays each engine family's documented stream
// format, and the broken ones, and compares the Response with its golden.
func TestClient_ChatReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/streams/*.sse")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no stream files")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		if strings.HasPrefix(name, "completions_") || strings.Contains(name, "_completions_") {
			continue // batch streams: TestClient_Complete
		}
		t.Run(name, func(t *testing.T) {
			srv := replayServer(t, "text/event-stream", pipelinetest.ReadFile(t, f))
			c := New(Config{BaseURL: srv.URL, Model: "m", MaxConns: 1})
			clock := extractbench.NewClock()
			sched := clock.Now()
			r := c.Chat(pipelinetest.Context(t), clock, sched, "sys", "doc", Generation{MaxTokens: 64})
			if r.SchedNS != sched {
				t.Errorf("SchedNS = %d, want %d", r.SchedNS, sched)
			}
			checkGolden(t, strings.TrimSuffix(f, ".sse")+".golden.json", observe(t, r))
		})
	}
}

// TestClient_ChatRequest checks what is sent: the streamed chat request with
// usage asked, the generation settings, and the key only in the header.
func TestClient_ChatRequest(t *testing.T) {
	var got map[string]any
	var auth, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, path = r.Header.Get("Authorization"), r.URL.Path
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decode request: %v", err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(pipelinetest.ReadFile(t, "testdata/streams/vllm_chat.sse"))
	}))
	defer srv.Close()
	seed := 7
	c := New(Config{BaseURL: srv.URL + "/", Model: "qwen", APIKey: "sk-secret", MaxConns: 4})
	r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "be terse", "the document", Generation{
		MaxTokens: 128, Temperature: 0, Seed: &seed,
		ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}`),
	})
	if r.Kind != extractbench.TransportOK {
		t.Fatalf("Kind = %q (%s), want OK", r.Kind, r.Detail)
	}
	if path != "/v1/chat/completions" {
		t.Errorf("path = %q", path)
	}
	if auth != "Bearer sk-secret" {
		t.Errorf("Authorization = %q", auth)
	}
	want := map[string]any{
		"model": "qwen", "stream": true, "max_tokens": 128.0, "temperature": 0.0, "seed": 7.0,
		"stream_options":  map[string]any{"include_usage": true},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "x", "schema": map[string]any{"type": "object"}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "be terse"},
			map[string]any{"role": "user", "content": "the document"},
		},
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("request body\ngot:  %s\nwant: %s", gotJSON, wantJSON)
	}
}

// TestClient_ChatHTTPErrors checks non-2xx answers and odd 200s.
func TestClient_ChatHTTPErrors(t *testing.T) {
	const vllmContext = `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 4610 tokens (4098 in the messages, 512 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`
	const oom = `{"error":{"message":"CUDA out of memory. Tried to allocate 1.50 GiB","type":"InternalServerError","param":null,"code":500}}`
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		wantKind    extractbench.TransportKind
		wantStatus  int
		wantDetail  string // substring
		wantOutput  string
		wantBody    bool // ErrorBody holds the body
	}{
		{"vllm context length", 400, "application/json", vllmContext, extractbench.TransportHTTPStatus, 400, "maximum context length is 4096", "", true},
		{"oom 500", 500, "application/json", oom, extractbench.TransportHTTPStatus, 500, "CUDA out of memory", "", true},
		{"bare text 502", 502, "text/plain", "upstream connect error", extractbench.TransportHTTPStatus, 502, "upstream connect error", "", true},
		{"tgi 422", 422, "application/json", `{"error":"Input validation error: max_new_tokens must be <= 4096","error_type":"validation"}`, extractbench.TransportHTTPStatus, 422, "Input validation error", "", true},
		{"html 200", 200, "text/html; charset=utf-8", "<!DOCTYPE html><html><body>Welcome to nginx!</body></html>", extractbench.TransportContentType, 200, "text/html", "", false},
		{"unlabelled html 200", 200, "", "<html>login</html>", extractbench.TransportContentType, 200, "not an event stream", "", false},
		{"non-streamed json", 200, "application/json", `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\": 1}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9}}`, extractbench.TransportOK, 200, "", `{"a": 1}`, false},
		{"sse as text/plain", 200, "text/plain", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", extractbench.TransportOK, 200, "", "hi", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				} else {
					w.Header()["Content-Type"] = nil // no sniffing by net/http
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c := New(Config{BaseURL: srv.URL, Model: "m"})
			r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
			checkTimingOrder(t, r)
			if r.Kind != tt.wantKind || r.HTTPStatus != tt.wantStatus {
				t.Errorf("Kind, HTTPStatus = %q, %d, want %q, %d (%s)", r.Kind, r.HTTPStatus, tt.wantKind, tt.wantStatus, r.Detail)
			}
			if !strings.Contains(r.Detail, tt.wantDetail) {
				t.Errorf("Detail = %q, want it to contain %q", r.Detail, tt.wantDetail)
			}
			if r.Output != tt.wantOutput {
				t.Errorf("Output = %q, want %q", r.Output, tt.wantOutput)
			}
			if tt.wantBody && r.ErrorBody != tt.body {
				t.Errorf("ErrorBody = %q, want %q", r.ErrorBody, tt.body)
			}
		})
	}
}

func TestClient_ErrorBodyBounded(t *testing.T) {
	big := strings.Repeat("x", 3*maxErrorBody)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
		w.Write([]byte(big))
	}))
	defer srv.Close()
	r := New(Config{BaseURL: srv.URL}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if got, want := len(r.ErrorBody), maxErrorBody; got != want {
		t.Errorf("len(ErrorBody) = %d, want %d", got, want)
	}
	if len(r.Detail) > 400 {
		t.Errorf("len(Detail) = %d, want a short reason", len(r.Detail))
	}
}

// TestClient_APIKeyNeverLeaks uses an engine that echoes the key back in its
// error body: neither ErrorBody nor Detail may carry it.
func TestClient_APIKeyNeverLeaks(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"invalid key: ` + r.Header.Get("Authorization") + `","code":401}}`))
	}))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, APIKey: key})
	r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.HTTPStatus != 401 {
		t.Fatalf("HTTPStatus = %d, want 401", r.HTTPStatus)
	}
	for field, s := range map[string]string{"ErrorBody": r.ErrorBody, "Detail": r.Detail} {
		if strings.Contains(s, key) {
			t.Errorf("%s leaks the API key: %q", field, s)
		}
	}
	err := c.Health(pipelinetest.Context(t))
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("Health error = %v, want an error without the key", err)
	}
}

// TestClient_SlowFirstByte checks that time to first byte and first token
// include the engine's delay before it answers.
func TestClient_SlowFirstByte(t *testing.T) {
	const delay = 60 * time.Millisecond
	body := pipelinetest.ReadFile(t, "testdata/streams/vllm_chat.sse")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush() // headers now, body later: vLLM's shape
		time.Sleep(delay)
		w.Write(body)
	}))
	defer srv.Close()
	r := New(Config{BaseURL: srv.URL}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportOK {
		t.Fatalf("Kind = %q (%s)", r.Kind, r.Detail)
	}
	checkTimingOrder(t, r)
	if got := time.Duration(r.FirstByteNS - r.SendNS); got < delay {
		t.Errorf("time to first byte = %v, want >= %v", got, delay)
	}
	if got := time.Duration(r.FirstTokenNS - r.SendNS); got < delay {
		t.Errorf("TTFT = %v, want >= %v", got, delay)
	}
}

// TestClient_RoleChunkIsNotAToken sends the role chunk, waits, then the
// content: the first token is the content's arrival, not the role's.
func TestClient_RoleChunkIsNotAToken(t *testing.T) {
	const gap = 40 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		time.Sleep(gap)
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	r := New(Config{BaseURL: srv.URL}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportOK || r.Output != "x" {
		t.Fatalf("Kind, Output = %q, %q (%s)", r.Kind, r.Output, r.Detail)
	}
	if got := time.Duration(r.FirstTokenNS - r.FirstByteNS); got < gap {
		t.Errorf("first token %v after first byte, want >= %v", got, gap)
	}
}

// TestClient_ResetMidStream hijacks the connection, sends a chunked 200 with
// one event, and closes it without the terminating chunk.
func TestClient_ResetMidStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		ev := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"date\\\"\"}}]}\n\n"
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		buf.WriteString(strings.ToLower(strconvHex(len(ev))) + "\r\n" + ev + "\r\n")
		buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // RST rather than FIN
		}
	}))
	defer srv.Close()
	r := New(Config{BaseURL: srv.URL}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	checkTimingOrder(t, r)
	if r.Kind != extractbench.TransportReset {
		t.Errorf("Kind = %q (%s), want reset", r.Kind, r.Detail)
	}
	if r.Output != `{"date"` {
		t.Errorf("Output = %q, want the partial output kept", r.Output)
	}
	if r.HTTPStatus != 200 {
		t.Errorf("HTTPStatus = %d, want 200", r.HTTPStatus)
	}
}

// hang blocks a handler until the client goes away or the test ends. (The
// server notices a client's close only once the request body was read.)
func hang(r *http.Request, release <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-release:
	}
}

func strconvHex(n int) string {
	const digits = "0123456789abcdef"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 16 {
		b = append([]byte{digits[n%16]}, b...)
	}
	return string(b)
}

// TestClient_Timeout: the engine sends one chunk and then nothing; the
// per-request timeout ends the request, keeping the partial output.
func TestClient_Timeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		hang(r, release)
	}))
	defer srv.Close()
	defer close(release)
	c := New(Config{BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
	r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	checkTimingOrder(t, r)
	if r.Kind != extractbench.TransportTimeout {
		t.Errorf("Kind = %q (%s), want timeout", r.Kind, r.Detail)
	}
	if r.Output != "{" {
		t.Errorf("Output = %q, want the partial output", r.Output)
	}
}

// TestClient_TimeoutBeforeHeaders: the engine never answers at all.
func TestClient_TimeoutBeforeHeaders(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hang(r, release)
	}))
	defer srv.Close()
	defer close(release)
	r := New(Config{BaseURL: srv.URL, Timeout: 30 * time.Millisecond}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportTimeout || r.HTTPStatus != 0 || r.FirstByteNS != 0 {
		t.Errorf("Kind, HTTPStatus, FirstByteNS = %q, %d, %d (%s), want timeout, 0, 0", r.Kind, r.HTTPStatus, r.FirstByteNS, r.Detail)
	}
}

func TestClient_Canceled(t *testing.T) {
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(pipelinetest.Context(t))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		cancel() // the run is interrupted mid-stream
		hang(r, release)
	}))
	defer srv.Close()
	defer close(release)
	r := New(Config{BaseURL: srv.URL}).Chat(ctx, extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportInterrupted {
		t.Errorf("Kind = %q (%s), want interrupted", r.Kind, r.Detail)
	}
}

func TestClient_Refused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := New(Config{BaseURL: "http://" + addr}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportRefused || r.HTTPStatus != 0 {
		t.Errorf("Kind, HTTPStatus = %q, %d (%s), want refused, 0", r.Kind, r.HTTPStatus, r.Detail)
	}
	if r.SendNS == 0 || r.DoneNS < r.SendNS {
		t.Errorf("SendNS, DoneNS = %d, %d", r.SendNS, r.DoneNS)
	}
}

// TestClient_LongLine streams one chunk of 2 MB content, beyond bufio's
// default line limit.
func TestClient_LongLine(t *testing.T) {
	content := strings.Repeat("é", 1<<20)
	ev, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": "stop"}}})
	body := "data: " + string(ev) + "\n\ndata: [DONE]\n\n"
	srv := replayServer(t, "text/event-stream", []byte(body))
	r := New(Config{BaseURL: srv.URL}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportOK || r.Output != content {
		t.Errorf("Kind = %q (%s), len(Output) = %d, want OK and %d", r.Kind, r.Detail, len(r.Output), len(content))
	}
}

// TestClient_ConnectionReuse checks that sequential requests share one
// connection: a re-dial per request would be measured as latency.
func TestClient_ConnectionReuse(t *testing.T) {
	body := pipelinetest.ReadFile(t, "testdata/streams/vllm_chat.sse")
	conns := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for line := range bytes.Lines(body) {
			w.Write(line)
			w.(http.Flusher).Flush() // event by event, as engines send them
		}
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns[c.RemoteAddr().String()] = true
		}
	}
	srv.Start()
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, MaxConns: 1})
	for range 5 {
		if r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{}); r.Kind != extractbench.TransportOK {
			t.Fatalf("Kind = %q (%s)", r.Kind, r.Detail)
		}
	}
	srv.Close() // waits for the handlers, so conns is settled
	if len(conns) != 1 {
		t.Errorf("connections = %d, want 1", len(conns))
	}
}
