package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results/resultstest"
)

// stallingEngine answers /health and /v1/models, and holds every chat
// request open (until the client goes away) while stall is set; otherwise
// it answers a complete stream. arrived receives one value per request.
func stallingEngine(t *testing.T, stall *atomic.Bool) (string, chan struct{}) {
	t.Helper()
	arrived := make(chan struct{}, 64)
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only once the body is read
		if stall.Load() {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"date\\\": null, \\\"amount\\\": null, \\\"category\\\": null}\"},\"finish_reason\":null}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, arrived
}

// interruptDeadline bounds how long an interrupted run may take to end.
const interruptDeadline = 10 * time.Second

// syncBuffer is a bytes.Buffer safe for the runner's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runInterrupted starts a run against a stalling engine, cancels its
// context once a request is in flight, then calls after (the second
// signal, or nothing), and returns how long the run took to end after the
// first signal.
func runInterrupted(t *testing.T, grace string, after func(abandon chan struct{})) (out string, progress *syncBuffer, took time.Duration, stall *atomic.Bool) {
	t.Helper()
	stall = new(atomic.Bool)
	stall.Store(true)
	url, arrived := stallingEngine(t, stall)
	dir := t.TempDir()
	p := fmt.Sprintf(`name: stall
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
request_timeout: 120s
interrupt_grace: %s
variants:
  - name: v
    engine: {url: %q, model: m}
`, writeSmallCorpus(t, dir, 3), grace, url)
	proto := filepath.Join(dir, "stall.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "out")
	progress = &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	abandon := make(chan struct{})
	type result struct {
		sum *pipeline.RunReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := pipeline.Run(ctx, pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true, Progress: progress,
			Starters: starter.Starters(), Abandon: abandon})
		done <- result{sum, err}
	}()
	select {
	case <-arrived:
	case <-time.After(interruptDeadline):
		t.Fatal("no request reached the engine")
	}
	start := time.Now()
	cancel()
	after(abandon)
	select {
	case r := <-done:
		took = time.Since(start)
		if r.err != nil {
			t.Fatalf("run: %v", r.err)
		}
		if !r.sum.Interrupted || r.sum.Status != "interrupted" {
			t.Errorf("interrupted %v, status %q; want an interrupted run", r.sum.Interrupted, r.sum.Status)
		}
	case <-time.After(interruptDeadline):
		t.Fatalf("the run did not end within %s of the signal (request_timeout is 120s)", interruptDeadline)
	}
	reqs := resultstest.Requests(t, out)
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		return r.Kind == extractbench.TransportInterrupted && r.Failure == extractbench.None && !r.Accepted
	}); got != 1 {
		t.Errorf("interrupted rows = %d, want the 1 request in flight", got)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Failure != extractbench.None }); got != 0 {
		t.Errorf("%d requests classed as failures: an interruption is not the engine's", got)
	}
	return out, progress, took, stall
}

// TestRun_InterruptGrace is issue 17's third reproduction: against an
// engine that stalls, with request_timeout 120s, the first signal stops
// dispatching, says how many requests are in flight and how long it waits,
// and after interrupt_grace cancels them as interrupted, which -resume sends
// again.
func TestRun_InterruptGrace(t *testing.T) {
	out, progress, took, stall := runInterrupted(t, "300ms", func(chan struct{}) {})
	if took > 5*time.Second {
		t.Errorf("the run ended %s after the signal, want about the 300ms grace", took)
	}
	for _, want := range []string{"1 request(s) in flight", "waiting up to 300ms", "recorded as interrupted"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	stall.Store(false)
	sum, err := run(t, pipeline.Options{OutDir: out, Resume: true})
	if err != nil || sum.Interrupted {
		t.Fatalf("resume: %v (interrupted %v)", err, sum != nil && sum.Interrupted)
	}
	reqs := resultstest.Requests(t, out)
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Kind != extractbench.TransportInterrupted }); got != 3 {
		t.Errorf("measured rows after resume = %d, want 3", got)
	}
	if got := len(reqs); got != 3 {
		t.Errorf("rows after resume = %d, want 3 (the interrupted row replaced)", got)
	}
	if got := resultstest.Count(resultstest.Passes(t, out), func(p *extractbench.Pass) bool { return p.Status == extractbench.PassComplete && p.Docs == 3 }); got != 1 {
		t.Errorf("complete passes of 3 documents = %d, want 1", got)
	}
}

// TestRun_SecondSignalAbandons: a second signal cancels the requests in
// flight at once, long before the grace period, and the run is still
// recorded as interrupted (exit 3 in the CLI).
func TestRun_SecondSignalAbandons(t *testing.T) {
	_, _, took, _ := runInterrupted(t, "1m", func(abandon chan struct{}) {
		time.Sleep(100 * time.Millisecond)
		close(abandon)
	})
	if took > 5*time.Second {
		t.Errorf("the run ended %s after the second signal, want at once", took)
	}
}
