// Package llamacpp_test replays the wire formats a real llama-server sent
// (testdata/, captured by capture.sh; testdata/README.md names the build)
// through extractbench's client and scorer, so that a change in either that
// misreads llama.cpp shows up without a llama.cpp build.
package llamacpp_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/client"
)

// captured is one answer as llama-server sent it: status, Content-Type and
// the body's bytes.
type captured struct {
	status      int
	contentType string
	body        []byte
}

func mustCapture(t *testing.T, name string) captured {
	t.Helper()
	head, err := os.ReadFile(filepath.Join("testdata", name+".headers"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(filepath.Join("testdata", name+".body"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), nil)
	if err != nil {
		t.Fatalf("%s.headers: %v", name, err)
	}
	return captured{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: body}
}

// replay answers every request with the captured answer of the path
// (fixtures maps a path to a fixture name), 404 otherwise.
func replay(t *testing.T, fixtures map[string]string) *httptest.Server {
	t.Helper()
	got := map[string]captured{}
	for path, name := range fixtures {
		got[path] = mustCapture(t, name)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := got[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", c.contentType)
		w.WriteHeader(c.status)
		w.Write(c.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func expected(t *testing.T, id string) corpus.Expected {
	t.Helper()
	c, err := corpus.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Documents {
		if d.ID == id {
			return d.Expected
		}
	}
	t.Fatalf("corpus/default has no %s", id)
	return corpus.Expected{}
}

// chat sends the protocol's request for a fixture and scores the answer
// against doc-0002's expectation (the document capture.sh sent, but for the
// in-stream errors' second request, whose answer is empty either way).
func chat(t *testing.T, fixture string) (extractbench.Response, extractbench.Score) {
	t.Helper()
	srv := replay(t, map[string]string{"/v1/chat/completions": fixture})
	c := client.New(client.Config{BaseURL: srv.URL, Model: "extract-llama-15m", MaxConns: 1})
	defer c.Close()
	r := c.Chat(testContext(t), extractbench.NewClock(), 0, "system", "user", client.Generation{MaxTokens: 48})
	tr := r.Transport
	return r, eval.Evaluate(r.Output, expected(t, "doc-0002"), tr, eval.Options{})
}

// TestFixtures_Answers: the answers llama-server streams (and the one it
// sends whole when asked) read as the engine meant them: content, finish
// reason, usage from the usage-only chunk, one content chunk per token.
func TestFixtures_Answers(t *testing.T) {
	tests := []struct {
		fixture       string
		finish        string
		prompt, compl int
		failure       extractbench.Failure
	}{
		{"chat-stream", "stop", 211, 26, extractbench.None},
		{"chat-nonstream", "stop", 211, 26, extractbench.None},
		{"chat-stream-length", "length", 211, 5, extractbench.Truncation},
		// ignore_eos past the answer until the slot's 1,024 tokens are full
		{"chat-stream-slot-full", "length", 211, 813, extractbench.Truncation},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			r, o := chat(t, tt.fixture)
			if r.Kind != extractbench.TransportOK || r.HTTPStatus != 200 {
				t.Fatalf("transport %q HTTP %d (%s), want a completed 200", r.Kind, r.HTTPStatus, r.Detail)
			}
			if r.FinishReason != tt.finish {
				t.Errorf("finish_reason %q, want %q", r.FinishReason, tt.finish)
			}
			if !r.UsageReported || r.PromptTokens != tt.prompt || r.CompletionTokens != tt.compl {
				t.Errorf("usage reported %v, %d prompt + %d completion tokens; want %d + %d",
					r.UsageReported, r.PromptTokens, r.CompletionTokens, tt.prompt, tt.compl)
			}
			// llama.cpp sends one chunk per token but the end of text, which its
			// usage counts (completion_tokens 26, 25 content chunks): within the
			// run's token_count_mismatches tolerance, max(2, 10%).
			chunks := r.CompletionTokens
			if tt.finish == "stop" {
				chunks--
			}
			if strings.HasPrefix(tt.fixture, "chat-stream") && r.ClientChunks != chunks {
				t.Errorf("%d content chunks for %d completion tokens (%s)", r.ClientChunks, r.CompletionTokens, tt.finish)
			}
			if o.Failure != tt.failure || (tt.failure == extractbench.None) != o.Accepted {
				t.Errorf("scored %q (%s), accepted %v; want %q", o.Failure, o.FailureDetail, o.Accepted, tt.failure)
			}
		})
	}
}

// TestFixtures_Errors: llama-server's refusals and its in-stream error event.
func TestFixtures_Errors(t *testing.T) {
	tests := []struct {
		fixture string
		status  int
		kind    extractbench.TransportKind
		message string // in the stored error body
		failure extractbench.Failure
		output  bool // some content arrived before the error
	}{
		// 400 exceed_context_size_error before any byte of a stream: the prompt
		// is over the slot's 4,096 tokens, truncation by MEASUREMENT.md 6.
		{"error-context-stream", 400, extractbench.TransportHTTPStatus, "exceeds the available context size", extractbench.Truncation, false},
		{"error-context-nonstream", 400, extractbench.TransportHTTPStatus, "exceeds the available context size", extractbench.Truncation, false},
		{"error-no-messages", 400, extractbench.TransportHTTPStatus, "'messages' is required", extractbench.Error, false},
		// llama.cpp answers a body that is not JSON with a 500, not a 400.
		{"error-invalid-json", 500, extractbench.TransportHTTPStatus, "parse_error", extractbench.Error, false},
		// data: {"error":{"code":500,...}} inside a 200 stream, no [DONE]
		// after it: the status the client records is the event's code. What
		// ran out was the KV cells the slots share (--kv-unified), not this
		// prompt's context (an admitted prompt fits it; one that does not is
		// refused with the 400 above): memory, by MEASUREMENT.md 6.
		{"error-in-stream-after-content", 500, extractbench.TransportHTTPStatus, "Context size has been exceeded.", extractbench.Memory, true},
		{"error-in-stream-at-prefill", 500, extractbench.TransportHTTPStatus, "Context size has been exceeded.", extractbench.Memory, false},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			r, o := chat(t, tt.fixture)
			if r.Kind != tt.kind || r.HTTPStatus != tt.status {
				t.Errorf("transport %q HTTP %d, want %q HTTP %d (%s)", r.Kind, r.HTTPStatus, tt.kind, tt.status, r.Detail)
			}
			if !strings.Contains(r.ErrorBody, tt.message) {
				t.Errorf("error body %q does not say %q", r.ErrorBody, tt.message)
			}
			if (r.Output != "") != tt.output {
				t.Errorf("output %q kept; want some: %v", r.Output, tt.output)
			}
			if o.Failure != tt.failure || o.Accepted {
				t.Errorf("scored %q (%s), accepted %v; want %q", o.Failure, o.FailureDetail, o.Accepted, tt.failure)
			}
		})
	}
}

// TestFixtures_Describe: what the client learns of the engine from
// /v1/models and /props (llama.cpp has no /version: 404), and that /health's
// 503 while the model loads is not ready.
func TestFixtures_Describe(t *testing.T) {
	srv := replay(t, map[string]string{
		"/v1/models": "v1-models",
		"/props":     "props",
		"/health":    "health-200",
	})
	c := client.New(client.Config{BaseURL: srv.URL, Model: "extract-llama-15m"})
	defer c.Close()
	ctx := testContext(t)
	r := c.Describe(ctx)
	if len(r.ServedModels) != 1 || r.ServedModels[0] != "extract-llama-15m" {
		t.Errorf("served models %q, want the --alias", r.ServedModels)
	}
	props := mustCapture(t, "props")
	want := jsonString(t, props.body, "build_info")
	if r.Version != want || r.VersionSource != "/props" {
		t.Errorf("version %q from %q, want /props build_info %q", r.Version, r.VersionSource, want)
	}
	// -c 16384 --parallel 4: a request has its slot's 4,096 tokens.
	if r.ContextWindow != 4096 {
		t.Errorf("context window %d, want the slot's 4096", r.ContextWindow)
	}
	if err := c.Health(ctx); err != nil {
		t.Errorf("health with the 200 answer: %v", err)
	}

	loading := replay(t, map[string]string{"/health": "health-503"})
	lc := client.New(client.Config{BaseURL: loading.URL, Model: "extract-llama-15m"})
	defer lc.Close()
	err := lc.Health(ctx)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "Loading model") {
		t.Errorf("health while loading: %v, want the 503 and its message", err)
	}
}

// jsonString is the top-level string field key of a JSON object, found
// without decoding the rest (the fixture's own value, not a constant).
func jsonString(t *testing.T, b []byte, key string) string {
	t.Helper()
	i := bytes.Index(b, []byte(strconv.Quote(key)+":"))
	if i < 0 {
		t.Fatalf("no %q in %s", key, b)
	}
	v, err := strconv.QuotedPrefix(string(b[i+len(key)+3:]))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := strconv.Unquote(v)
	return s
}
