package client

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// chatHostile sends one chat request to a hostile engine in mode m and
// returns the response and how the classifier judges it.
func chatHostile(t *testing.T, m hostile.Mode) (extractbench.Response, extractbench.Score) {
	t.Helper()
	s := hostile.MustNew(t, m, hostile.Options{})
	r := New(Config{BaseURL: s.URL, Model: hostile.Model, MaxConns: 1}).
		Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{MaxTokens: capMaxTokens})
	checkTimingOrder(t, r)
	return r, eval.Evaluate(r.Output, corpus.Expected{}, r.Transport, eval.Options{})
}

// TestClient_InStreamErrors reads each engine's error frames as its source
// writes them: the status the error declares, its text as ErrorBody, the
// prompt size llama.cpp's context error names, and the failure class that
// follows (a prompt over the context window is truncation, out of memory
// is memory).
func TestClient_InStreamErrors(t *testing.T) {
	tests := []struct {
		mode       hostile.Mode
		wantStatus int
		wantPrompt int
		wantOutput string
		failure    extractbench.Failure
		detail     string // in the failure detail
	}{
		{hostile.SSELlamaCppContextError, 400, hostile.PromptTokens, "", extractbench.Truncation, "context size"},
		{hostile.SSELlamaCppDataContextError, 400, hostile.PromptTokens, "", extractbench.Truncation, "context size"},
		{hostile.SSELlamaCpp400Context, 400, hostile.PromptTokens, "", extractbench.Truncation, "HTTP 400 says \"context size\""},
		{hostile.SSELlamaCppOOMError, 500, 0, `{"date": `, extractbench.Memory, "out of memory"},
		{hostile.SSEEventErrorText, 500, 0, "", extractbench.Memory, "out of memory"},
		{hostile.SSEVLLMError, 500, 0, `{"date": `, extractbench.Memory, "out of memory"},
		{hostile.SSEVLLMFlatError, 400, 0, "", extractbench.Truncation, "maximum context"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			r, o := chatHostile(t, tt.mode)
			if r.Kind != extractbench.TransportHTTPStatus || r.HTTPStatus != tt.wantStatus || r.ErrorBody == "" {
				t.Errorf("Kind, HTTPStatus = %q, %d (%s), ErrorBody %q; want http_status, %d and the error as body",
					r.Kind, r.HTTPStatus, r.Detail, r.ErrorBody, tt.wantStatus)
			}
			if r.PromptTokens != tt.wantPrompt || r.UsageReported {
				t.Errorf("PromptTokens, UsageReported = %d, %v; want %d, false", r.PromptTokens, r.UsageReported, tt.wantPrompt)
			}
			if r.Output != tt.wantOutput {
				t.Errorf("Output = %q, want %q kept", r.Output, tt.wantOutput)
			}
			if o.Failure != tt.failure || !strings.Contains(o.FailureDetail, tt.detail) {
				t.Errorf("failure = %q (%s), want %q saying %q", o.Failure, o.FailureDetail, tt.failure, tt.detail)
			}
		})
	}
}

// TestClient_StreamFraming: a stream of bare-CR lines is read like any
// other; a body compressed although the client asked for identity is
// refused saying so; a close after a complete chunk says just that.
func TestClient_StreamFraming(t *testing.T) {
	t.Run("bare CR", func(t *testing.T) {
		r, o := chatHostile(t, hostile.SSEBareCR)
		if r.Kind != extractbench.TransportOK || r.Output != hostile.Answer || r.PromptTokens != 10 || r.FinishReason != "stop" {
			t.Errorf("Kind, Output, PromptTokens, FinishReason = %q (%s), %q, %d, %q; want the whole answer",
				r.Kind, r.Detail, r.Output, r.PromptTokens, r.FinishReason)
		}
		if o.Failure == extractbench.Error {
			t.Errorf("failure = %q (%s), want the answer judged on its content", o.Failure, o.FailureDetail)
		}
	})
	t.Run("gzip", func(t *testing.T) {
		r, o := chatHostile(t, hostile.SSEGzip)
		const want = "body is gzip-compressed (Content-Encoding: gzip) although the client asked for identity"
		if r.Kind != extractbench.TransportContentType || !strings.Contains(r.Detail, want) {
			t.Errorf("Kind = %q (%s), want content_type saying %q", r.Kind, r.Detail, want)
		}
		if o.Failure != extractbench.Error || !strings.Contains(o.FailureDetail, "gzip-compressed") {
			t.Errorf("failure = %q (%s), want error naming the compression", o.Failure, o.FailureDetail)
		}
	})
	t.Run("complete chunk, no [DONE]", func(t *testing.T) {
		r, o := chatHostile(t, hostile.SSENoDone)
		if r.Kind != extractbench.TransportCut || r.Detail != "stream ended after a complete chunk, before [DONE]" || r.Output != hostile.Answer {
			t.Errorf("Kind, Detail, Output = %q, %q, %q", r.Kind, r.Detail, r.Output)
		}
		if o.Failure != extractbench.Error || !strings.Contains(o.FailureDetail, "after a complete JSON object, before [DONE]") {
			t.Errorf("failure = %q (%s), want error after a complete object", o.Failure, o.FailureDetail)
		}
	})
}

// TestClient_AsksForIdentity: the request says Accept-Encoding: identity,
// not only leaves gzip out.
func TestClient_AsksForIdentity(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Values("Accept-Encoding")
		hostile.StreamAnswer(w, hostile.Answer)
	}))
	defer srv.Close()
	r := New(Config{BaseURL: srv.URL}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportOK || len(got) != 1 || got[0] != "identity" {
		t.Errorf("Kind = %q (%s), Accept-Encoding = %q, want [identity]", r.Kind, r.Detail, got)
	}
}
