package client

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// TestClient_StaleConnectionRetried is the llama.cpp issue's reproduction:
// the engine closes a connection after every streamed answer while it
// advertises keep-alive, so a request written on the pooled connection
// reads EOF before any answer. Every request succeeds, the engine answers
// each exactly once, and a retried one says so; ResetPeaks, a POST that
// hits the same dead connection, succeeds too.
func TestClient_StaleConnectionRetried(t *testing.T) {
	s := hostile.MustNew(t, hostile.TransportCloseAfterStream, hostile.Options{})
	c := New(Config{BaseURL: s.URL, MaxConns: 1})
	defer c.Close()
	const n = 20
	retried := 0
	for i := range n {
		if i == 1 { // the first answer left its connection in the pool, dead
			if supported, err := c.ResetPeaks(pipelinetest.Context(t)); !supported || err != nil {
				t.Errorf("ResetPeaks after a stream = %v, %v; want supported, no error", supported, err)
			}
		}
		r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
		if r.Kind != extractbench.TransportOK || r.Output != hostile.Answer {
			t.Fatalf("request %d: Kind %q (%s), Output %q; want every request answered", i+1, r.Kind, r.Detail, r.Output)
		}
		if strings.Contains(r.Detail, "sent again on a new connection") {
			retried++
		}
	}
	if got := s.Requests.Load(); got != n {
		t.Errorf("the engine answered %d chat requests, want %d: each once", got, n)
	}
	if retried == 0 {
		t.Error("no response says it was sent again: the mode did not bite, or the retry is not recorded")
	}
}

// TestClient_FreshConnectionNotRetried: a request that fails on a new
// connection reached the engine, so it is the engine's failure and is sent
// once; one that fails on a pooled connection is sent once more, never
// twice more.
func TestClient_FreshConnectionNotRetried(t *testing.T) {
	s := hostile.MustNew(t, hostile.TransportDrop, hostile.Options{})
	c := New(Config{BaseURL: s.URL, MaxConns: 1})
	defer c.Close()
	r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportReset || strings.Contains(r.Detail, "sent again") {
		t.Errorf("Kind %q, Detail %q: want reset, not sent again", r.Kind, r.Detail)
	}
	if got := s.Requests.Load(); got != 1 {
		t.Errorf("the engine received %d requests on a new connection, want 1", got)
	}

	if _, err := c.Models(pipelinetest.Context(t)); err != nil { // leaves a connection in the pool
		t.Fatal(err)
	}
	r = c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportReset || !strings.Contains(r.Detail, "sent again") {
		t.Errorf("Kind %q, Detail %q: want reset, sent again once", r.Kind, r.Detail)
	}
	if got := s.Requests.Load() - 1; got != 2 {
		t.Errorf("the engine received the request %d times from a pooled connection, want 2", got)
	}
}

// TestClient_MetadataCallsHaveADeadline is item 6 at the client: an engine
// that never answers /version, /v1/models or POST /reset_peaks costs each
// call its deadline, and the call says it got no answer.
func TestClient_MetadataCallsHaveADeadline(t *testing.T) {
	const deadline = 100 * time.Millisecond
	t.Run("version", func(t *testing.T) {
		s := hostile.MustNew(t, hostile.TransportSilentVersion, hostile.Options{})
		rep := New(Config{BaseURL: s.URL, CallTimeout: deadline}).Describe(pipelinetest.Context(t))
		if len(rep.ServedModels) != 1 || rep.Version != "" {
			t.Errorf("Describe() = %+v, want the models and no version", rep)
		}
		if len(rep.Missed) != 1 || !strings.Contains(rep.Missed[0], "GET /version") {
			t.Errorf("Missed = %q, want GET /version", rep.Missed)
		}
	})
	t.Run("models", func(t *testing.T) {
		s := hostile.MustNew(t, hostile.TransportSilentModels, hostile.Options{})
		c := New(Config{BaseURL: s.URL, CallTimeout: deadline})
		if _, err := c.Models(pipelinetest.Context(t)); !errors.Is(err, ErrNoAnswer) {
			t.Errorf("Models() error = %v, want ErrNoAnswer", err)
		}
		rep := c.Describe(pipelinetest.Context(t))
		if rep.Version != "hostile-1" || len(rep.Missed) != 1 || !strings.Contains(rep.Missed[0], "GET /v1/models") {
			t.Errorf("Describe() = %+v, want the version and GET /v1/models missed", rep)
		}
	})
	t.Run("reset_peaks", func(t *testing.T) {
		s := hostile.MustNew(t, hostile.TransportSilentResetPeaks, hostile.Options{})
		supported, err := New(Config{BaseURL: s.URL, CallTimeout: deadline}).ResetPeaks(pipelinetest.Context(t))
		if !supported || !errors.Is(err, ErrNoAnswer) {
			t.Errorf("ResetPeaks() = %v, %v; want supported, ErrNoAnswer", supported, err)
		}
	})
}

// TestClient_ClientSideFault is item 11 at the client: the client's own
// resources running out (a dial that fails with EMFILE, as under ulimit -n
// 150 at 500/s) is transport kind client, which no figure of the engine
// counts: no failure class, no verdict.
func TestClient_ClientSideFault(t *testing.T) {
	s := hostile.MustNew(t, hostile.Normal, hostile.Options{})
	emfile := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("socket", syscall.EMFILE)}
	}
	r := New(Config{BaseURL: s.URL, Dial: emfile}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportClient || !strings.Contains(r.Detail, "too many open files") {
		t.Fatalf("Kind %q, Detail %q: want client, too many open files", r.Kind, r.Detail)
	}
	if s.Requests.Load() != 0 {
		t.Errorf("the engine received %d requests", s.Requests.Load())
	}
	o := eval.Evaluate(r.Output, corpus.Expected{}, r.Transport, eval.Options{Rule: extractbench.Strict})
	if o.Failure != extractbench.None || o.Accepted || r.Kind.Measured() {
		t.Errorf("Failure %q, Accepted %v, Measured %v: want no failure of the engine, not accepted, not measured", o.Failure, o.Accepted, r.Kind.Measured())
	}
}

// TestClient_RedirectNotFollowed is item 12: a 302 (which would turn the
// POST into a bodyless GET) or a 307 (which would measure another server)
// is recorded, with where it pointed, and the server it points at receives
// nothing, the API key least of all.
func TestClient_RedirectNotFollowed(t *testing.T) {
	const key = "sk-redirect-0123456789"
	for _, tt := range []struct {
		mode   hostile.Mode
		status int
	}{{hostile.TransportRedirect302, 302}, {hostile.TransportRedirect307, 307}} {
		t.Run(string(tt.mode), func(t *testing.T) {
			s := hostile.MustNew(t, tt.mode, hostile.Options{APIKey: key})
			sink := hostile.SinkOf(s)
			c := New(Config{BaseURL: s.URL, APIKey: key})
			r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
			if r.Kind != extractbench.TransportHTTPStatus || r.HTTPStatus != tt.status {
				t.Errorf("Kind, HTTPStatus = %q, %d, want http_status, %d", r.Kind, r.HTTPStatus, tt.status)
			}
			if !strings.Contains(r.Detail, "redirect") || !strings.Contains(r.Detail, sink.URL+"/v1/chat/completions") {
				t.Errorf("Detail %q does not say redirect to %s", r.Detail, sink.URL)
			}
			o := eval.Evaluate(r.Output, corpus.Expected{}, r.Transport, eval.Options{Rule: extractbench.Strict})
			if o.Failure != extractbench.Error {
				t.Errorf("Failure = %q, want error", o.Failure)
			}
			if _, err := c.Models(pipelinetest.Context(t)); err == nil || !strings.Contains(err.Error(), "redirect") {
				t.Errorf("Models() error = %v, want the redirect named", err)
			}
			c.Describe(pipelinetest.Context(t))
			if n, auth := sink.Requests(), sink.Authorizations(); n != 0 {
				t.Errorf("the redirect's target received %d requests (Authorization %q), want none", n, auth)
			}
		})
	}
}

// TestClient_BinaryErrorBody is item 9 at the client: a 500 whose body is
// binary leaves ErrorBody and Detail valid UTF-8.
func TestClient_BinaryErrorBody(t *testing.T) {
	s := hostile.MustNew(t, hostile.TransportBinary500, hostile.Options{})
	r := New(Config{BaseURL: s.URL}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.HTTPStatus != 500 || r.ErrorBody == "" {
		t.Fatalf("HTTPStatus %d, ErrorBody %q: want the 500 and its body", r.HTTPStatus, r.ErrorBody)
	}
	for field, v := range map[string]string{"ErrorBody": r.ErrorBody, "Detail": r.Detail, "Output": r.Output} {
		if !utf8.ValidString(v) {
			t.Errorf("%s is not valid UTF-8: %q", field, v)
		}
	}
	if !strings.ContainsRune(r.ErrorBody, utf8.RuneError) {
		t.Errorf("ErrorBody %q: want the invalid bytes shown as U+FFFD", r.ErrorBody)
	}
}
