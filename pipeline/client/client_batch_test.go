package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

func TestClient_Complete(t *testing.T) {
	var gotReq struct {
		Prompt        []string       `json:"prompt"`
		Stream        bool           `json:"stream"`
		StreamOptions map[string]any `json:"stream_options"`
		Messages      []any          `json:"messages"`
	}
	body := pipelinetest.ReadFile(t, "testdata/streams/vllm_completions_batch.sse")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/completions" {
			t.Errorf("path = %q", r.URL.Path)
		}
		json.NewDecoder(r.Body).Decode(&gotReq)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	clock := extractbench.NewClock()
	sched := clock.Now()
	resps, err := New(Config{BaseURL: srv.URL, Model: "m"}).Complete(pipelinetest.Context(t), clock, sched, []string{"p0", "p1", "p2"}, Generation{MaxTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotReq.Prompt) != 3 || gotReq.Prompt[2] != "p2" || !gotReq.Stream || gotReq.StreamOptions["include_usage"] != true || gotReq.Messages != nil {
		t.Errorf("request = %+v", gotReq)
	}
	want := []observed{
		{Output: `{"date": null, "amount": 3, "category": "fees"}`, FinishReason: "stop", PromptTokens: 180, CompletionTokens: 15, UsageReported: true, HTTPStatus: 200, HasFirstToken: true},
		{Output: `{"date": "2025-02-01", "amount": 7.25, "category": "travel"}`, FinishReason: "stop", PromptTokens: 210, CompletionTokens: 18, UsageReported: true, HTTPStatus: 200, HasFirstToken: true},
		{Output: `{"date": "2025`, FinishReason: "length", PromptTokens: 400, CompletionTokens: 5, UsageReported: true, HTTPStatus: 200, HasFirstToken: true},
	}
	if len(resps) != len(want) {
		t.Fatalf("got %d responses, want %d", len(resps), len(want))
	}
	for i, r := range resps {
		if got := observe(t, r); got != want[i] {
			t.Errorf("response %d\ngot  %+v\nwant %+v", i, got, want[i])
		}
		if r.SchedNS != sched || r.SendNS != resps[0].SendNS || r.DoneNS != resps[0].DoneNS {
			t.Errorf("response %d: call instants differ from response 0", i)
		}
	}
}

// TestClient_CompleteTotalUsageOnly: a total for the call is not any one
// prompt's count, so each prompt counts its chunks and says so.
func TestClient_CompleteTotalUsageOnly(t *testing.T) {
	srv := replayServer(t, "text/event-stream", pipelinetest.ReadFile(t, "testdata/streams/completions_total_only.sse"))
	c := New(Config{BaseURL: srv.URL})
	resps, err := c.Complete(pipelinetest.Context(t), extractbench.NewClock(), 1, []string{"a", "b"}, Generation{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []observed{
		{Output: `{"a": 1}`, FinishReason: "stop", CompletionTokens: 2, HTTPStatus: 200, HasFirstToken: true},
		{Output: `{"b": 2}`, FinishReason: "stop", CompletionTokens: 3, HTTPStatus: 200, HasFirstToken: true},
	} {
		if got := observe(t, resps[i]); got != want {
			t.Errorf("response %d\ngot  %+v\nwant %+v", i, got, want)
		}
	}
}

// TestClient_CompleteSingle: with one prompt the call's usage is the prompt's.
func TestClient_CompleteSingle(t *testing.T) {
	srv := replayServer(t, "text/event-stream", []byte(
		"data: {\"choices\":[{\"index\":0,\"text\":\"{}\",\"finish_reason\":\"stop\"}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"))
	resps, err := New(Config{BaseURL: srv.URL}).Complete(pipelinetest.Context(t), extractbench.NewClock(), 1, []string{"a"}, Generation{})
	if err != nil {
		t.Fatal(err)
	}
	want := observed{Output: "{}", FinishReason: "stop", PromptTokens: 11, CompletionTokens: 2, UsageReported: true, HTTPStatus: 200, HasFirstToken: true}
	if got := observe(t, resps[0]); got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestClient_CompleteErrors(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		body        string
		unsupported bool
	}{
		{"no completions endpoint", 404, `{"detail":"Not Found"}`, true},
		{"list prompt refused", 400, `{"error":{"message":"prompt must be a string, not a list","type":"invalid_request_error"}}`, true},
		{"fastapi type error", 422, `{"detail":[{"loc":["body","prompt"],"msg":"str type expected","type":"type_error.str"}]}`, true},
		{"context length", 400, `{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (2000 in the messages, 100 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, false},
		{"oom", 500, `{"error":{"message":"CUDA out of memory","code":500}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			resps, err := New(Config{BaseURL: srv.URL}).Complete(pipelinetest.Context(t), extractbench.NewClock(), 1, []string{"a", "b"}, Generation{})
			if got := errors.Is(err, ErrBatchUnsupported); got != tt.unsupported {
				t.Fatalf("ErrBatchUnsupported = %v (err %v), want %v", got, err, tt.unsupported)
			}
			if tt.unsupported {
				return
			}
			if len(resps) != 2 {
				t.Fatalf("got %d responses, want 2", len(resps))
			}
			for i, r := range resps {
				if r.Kind != extractbench.TransportHTTPStatus || r.HTTPStatus != tt.status || r.ErrorBody != tt.body {
					t.Errorf("response %d: Kind, HTTPStatus, ErrorBody = %q, %d, %q", i, r.Kind, r.HTTPStatus, r.ErrorBody)
				}
			}
		})
	}
}

// TestClient_CompleteCut: a transport failure is every prompt's, each
// keeping its own partial output.
func TestClient_CompleteCut(t *testing.T) {
	srv := replayServer(t, "text/event-stream", []byte(
		"data: {\"choices\":[{\"index\":1,\"text\":\"b\"}]}\n\ndata: {\"choices\":[{\"index\":0,\"text\":\"a\"}]}\n\n"))
	resps, err := New(Config{BaseURL: srv.URL}).Complete(pipelinetest.Context(t), extractbench.NewClock(), 1, []string{"x", "y"}, Generation{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"a", "b"} {
		if resps[i].Kind != extractbench.TransportCut || resps[i].Output != want {
			t.Errorf("response %d: Kind, Output = %q, %q, want stream_cut, %q", i, resps[i].Kind, resps[i].Output, want)
		}
	}
}
