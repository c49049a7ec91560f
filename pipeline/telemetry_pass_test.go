package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// scrapedEngine answers chat requests once a /metrics scrape has seen them
// in flight, and reports in vllm:num_requests_running what it holds. A
// scrape that finds no request waits a little for one, so that a scrape
// sent as a request is sent sees it arrive; a request that no scrape sees
// is answered after fallback, so that nothing hangs.
type scrapedEngine struct {
	mu      sync.Mutex
	running int
	seen    chan struct{} // closed by a scrape that saw a request; renewed
	arrived chan struct{} // closed when a request arrives; renewed
}

func newScrapedEngine(t *testing.T, fallback time.Duration) string {
	e := &scrapedEngine{seen: make(chan struct{}), arrived: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		arrived := e.arrived
		idle := e.running == 0
		e.mu.Unlock()
		if idle {
			select {
			case <-arrived:
			case <-time.After(300 * time.Millisecond):
			}
		}
		e.mu.Lock()
		n := e.running
		if n > 0 {
			close(e.seen)
			e.seen = make(chan struct{})
		}
		e.mu.Unlock()
		fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} %d\n"+
			"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"m\"} %g\n", n, 0.1*float64(n))
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.running++
		seen := e.seen
		close(e.arrived)
		e.arrived = make(chan struct{})
		e.mu.Unlock()
		select {
		case <-seen:
		case <-time.After(fallback):
		}
		e.mu.Lock()
		e.running--
		e.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"date\\\": null, \\\"amount\\\": null, \\\"category\\\": null}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRun_ShortPassSampledWhileItRuns: a pass far shorter than the
// telemetry interval is scraped when its first request is sent and when its
// last one is, while they run: its running and KV peaks are the engine's
// figures then, not the 0 an idle engine reports before and after the
// pass, and telemetry_samples says how many scrapes they rest on.
func TestRun_ShortPassSampledWhileItRuns(t *testing.T) {
	dir := t.TempDir()
	url := newScrapedEngine(t, 5*time.Second)
	p := fmt.Sprintf(`name: short
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
telemetry_interval: 1h
variants:
  - name: v
    engine: {url: %q, model: m, metrics_url: %q}
`, writeSmallCorpus(t, dir, 2), url, url+"/metrics")
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	d, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Passes) != 1 {
		t.Fatalf("%d passes, want 1", len(d.Passes))
	}
	ps := d.Passes[0]
	if ps.ObservedMaxRunning == nil || *ps.ObservedMaxRunning != 1 {
		t.Errorf("observed_max_running %v, want 1: the request the engine ran", deref64(ps.ObservedMaxRunning))
	}
	if ps.PeakKVUsage == nil || *ps.PeakKVUsage != 0.1 {
		t.Errorf("peak_kv_usage %v, want 0.1", derefF(ps.PeakKVUsage))
	}
	if ps.TelemetrySamples == nil || *ps.TelemetrySamples != 2 {
		t.Errorf("telemetry_samples %v, want 2: one as the first request was sent, one as the last was", deref64(ps.TelemetrySamples))
	}
}

// TestRun_UnsampledPassIsNullNotZero: an engine whose metrics were never
// scraped while the pass's requests ran (every scrape fails) has NULL
// peaks, and telemetry_samples 0 flags it.
func TestRun_UnsampledPassIsNullNotZero(t *testing.T) {
	dir := t.TempDir()
	url := newScrapedEngine(t, 50*time.Millisecond)
	p := fmt.Sprintf(`name: unsampled
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
telemetry_interval: 1h
variants:
  - name: v
    engine: {url: %q, model: m, metrics_url: %q}
`, writeSmallCorpus(t, dir, 1), url, url+"/no-metrics-here")
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	d, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	ps := d.Passes[0]
	if ps.ObservedMaxRunning != nil || ps.PeakKVUsage != nil {
		t.Errorf("observed_max_running %v, peak_kv_usage %v; want NULL: nothing was sampled", deref64(ps.ObservedMaxRunning), derefF(ps.PeakKVUsage))
	}
	if ps.TelemetrySamples == nil || *ps.TelemetrySamples != 0 {
		t.Errorf("telemetry_samples %v, want 0", deref64(ps.TelemetrySamples))
	}
}

func deref64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func derefF(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
