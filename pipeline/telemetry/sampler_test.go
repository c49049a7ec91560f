package telemetry

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// vllmMetrics renders vLLM's /metrics text (prometheus_client exposition,
// model_name label) for one engine state.
func vllmMetrics(running, waiting, kv, preempt, queueSum, queueCount float64) string {
	const l = `model_name="Qwen/Qwen2.5-7B-Instruct"`
	return fmt.Sprintf(`# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",%[1]s} %[2]g
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",%[1]s} %[3]g
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",%[1]s} %[4]g
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",%[1]s} %[5]g
# HELP vllm:num_preemptions_created Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_created gauge
vllm:num_preemptions_created{engine="0",%[1]s} 1.7328864e+09
# HELP vllm:request_queue_time_seconds Histogram of time spent in WAITING phase for request.
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_sum{engine="0",%[1]s} %[6]g
vllm:request_queue_time_seconds_bucket{engine="0",le="0.3",%[1]s} %[7]g
vllm:request_queue_time_seconds_bucket{engine="0",le="+Inf",%[1]s} %[7]g
vllm:request_queue_time_seconds_count{engine="0",%[1]s} %[7]g
# HELP vllm:e2e_request_latency_seconds Histogram of e2e request latency in seconds.
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_sum{engine="0",%[1]s} %[8]g
vllm:e2e_request_latency_seconds_bucket{engine="0",le="1.0",%[1]s} 0.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",%[1]s} %[7]g
vllm:e2e_request_latency_seconds_count{engine="0",%[1]s} %[7]g
`, l, running, waiting, kv, preempt, queueSum, queueCount, queueCount*2)
}

// sequenceServer serves pages[i] at its i-th scrape, the last page after that.
func sequenceServer(t *testing.T, pages ...string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprint(w, pages[min(i, len(pages)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func eqPtr(p *float64, want float64) bool { return p != nil && *p == want }

// TestSampler_VLLM scrapes three states (start, peak, end) and checks peaks
// and deltas; metrics the engine does not expose stay nil.
func TestSampler_VLLM(t *testing.T) {
	srv, _ := sequenceServer(t,
		vllmMetrics(0, 0, 0.01, 2, 10, 100),
		vllmMetrics(8, 5, 0.93, 3, 11, 104),
		vllmMetrics(1, 0, 0.20, 6, 14.5, 120),
	)
	// An hour's interval: only the scrapes this test makes happen.
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Hour}, srv.Client())
	s.scrapeOnce(pipelinetest.Context(t))
	tel := s.Stop()

	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"MaxRunning", tel.MaxRunning, 8},
		{"MaxWaiting", tel.MaxWaiting, 5},
		{"PeakKVUsage", tel.PeakKVUsage, 0.93},
		{"PreemptionsDelta", tel.PreemptionsDelta, 4},
		{"QueueTimeSumDelta", tel.QueueTimeSumDelta, 4.5},
		{"QueueTimeCountDelta", tel.QueueTimeCountDelta, 20},
		{"E2ECountDelta", tel.E2ECountDelta, 20},
		{"E2ESumDelta", tel.E2ESumDelta, 40},
	}
	for _, c := range checks {
		if !eqPtr(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, deref(c.got), c.want)
		}
	}
	for name, p := range map[string]*float64{"TTFTSumDelta": tel.TTFTSumDelta, "PeakTorchAllocated": tel.PeakTorchAllocated,
		"PeakTorchReserved": tel.PeakTorchReserved, "PeakGPUMemUsed": tel.PeakGPUMemUsed, "GPUMemTotal": tel.GPUMemTotal} {
		if p != nil {
			t.Errorf("%s = %v, want nil (not exposed)", name, *p)
		}
	}
	if tel.Scrapes != 3 || tel.ScrapeErrors != 0 {
		t.Errorf("Scrapes, ScrapeErrors = %d, %d, want 3, 0", tel.Scrapes, tel.ScrapeErrors)
	}
	if got := tel.Histograms[extractbench.MetricQueueTime].Buckets; len(got) != 2 || got[0] != (BucketDelta{0.3, 20}) {
		t.Errorf("queue time buckets = %+v", got)
	}
	if n := countSamples(tel, extractbench.MetricRunning); n != 3 {
		t.Errorf("%d samples of %s, want 3", n, extractbench.MetricRunning)
	}
	for i := 1; i < len(tel.Samples); i++ {
		if tel.Samples[i].TNS < tel.Samples[i-1].TNS {
			t.Fatalf("samples out of time order at %d", i)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func countSamples(tel Telemetry, metric string) int {
	n := 0
	for _, s := range tel.Samples {
		if s.Metric == metric {
			n++
		}
	}
	return n
}

// TestSampler_TorchAndOldVLLM: the transformers engine's torch peaks per
// device are summed, allocated and reserved kept apart; vLLM's older
// gpu_cache_usage_perc is read as the KV usage.
func TestSampler_TorchAndOldVLLM(t *testing.T) {
	page := `# TYPE torch_cuda_max_memory_allocated_bytes gauge
torch_cuda_max_memory_allocated_bytes{device="0"} 1.5e+10
torch_cuda_max_memory_allocated_bytes{device="1"} 1e+10
# TYPE torch_cuda_max_memory_reserved_bytes gauge
torch_cuda_max_memory_reserved_bytes{device="0"} 2e+10
torch_cuda_max_memory_reserved_bytes{device="1"} 1.2e+10
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="a"} 0.4
vllm:gpu_cache_usage_perc{model_name="b"} 0.7
`
	srv, _ := sequenceServer(t, page)
	tel := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Hour}, nil).Stop()
	if !eqPtr(tel.PeakTorchAllocated, 2.5e10) || !eqPtr(tel.PeakTorchReserved, 3.2e10) || !eqPtr(tel.PeakKVUsage, 0.7) {
		t.Errorf("PeakTorchAllocated, PeakTorchReserved, PeakKVUsage = %v, %v, %v, want 2.5e10, 3.2e10, 0.7",
			deref(tel.PeakTorchAllocated), deref(tel.PeakTorchReserved), deref(tel.PeakKVUsage))
	}
	if tel.MaxRunning != nil || tel.PreemptionsDelta != nil || tel.QueueTimeCountDelta != nil {
		t.Errorf("vLLM figures from a page without them: %+v", tel)
	}
}

func TestSampler_MetricsUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	tel := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL + "/metrics", Interval: time.Hour}, nil).Stop()
	if tel.Scrapes != 0 || tel.ScrapeErrors != 2 || tel.LastScrapeError == "" {
		t.Errorf("Scrapes, ScrapeErrors, LastScrapeError = %d, %d, %q, want 0, 2 (start and stop), an error",
			tel.Scrapes, tel.ScrapeErrors, tel.LastScrapeError)
	}
	if tel.MaxRunning != nil || tel.PeakKVUsage != nil || tel.PreemptionsDelta != nil || tel.QueueTimeSumDelta != nil || len(tel.Samples) != 0 {
		t.Errorf("figures without metrics: %+v", tel)
	}
}

func TestSampler_Garbage(t *testing.T) {
	srv, _ := sequenceServer(t, "<html>not metrics</html>\n")
	tel := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Hour}, nil).Stop()
	if tel.Scrapes != 0 || tel.ScrapeErrors != 2 {
		t.Errorf("Scrapes, ScrapeErrors = %d, %d, want 0, 2", tel.Scrapes, tel.ScrapeErrors)
	}
}

// TestSampler_Ticks runs the background loop and stops it once it has
// scraped a few times: Stop must wait for the goroutine and return.
func TestSampler_Ticks(t *testing.T) {
	srv, n := sequenceServer(t, vllmMetrics(1, 0, 0.1, 0, 0, 0))
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Millisecond}, nil)
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	tel := s.Stop()
	if tel.Scrapes < 4 {
		t.Errorf("Scrapes = %d, want >= 4", tel.Scrapes)
	}
	again := s.Stop()
	if again.Scrapes != tel.Scrapes {
		t.Errorf("second Stop: Scrapes = %d, want %d", again.Scrapes, tel.Scrapes)
	}
}

func TestSampler_NvidiaSMI(t *testing.T) {
	pipelinetest.FakeSMI(t, "NVIDIA H200, 81920, 143771\n", "", "")
	tel := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{NvidiaSMI: true, Interval: time.Hour}, nil).Stop()
	if !eqPtr(tel.PeakGPUMemUsed, 81920*mib) || !eqPtr(tel.GPUMemTotal, 143771*mib) {
		t.Errorf("PeakGPUMemUsed, GPUMemTotal = %v, %v", deref(tel.PeakGPUMemUsed), deref(tel.GPUMemTotal))
	}
	if tel.GPUSamples != 1 || countSamples(tel, extractbench.MetricGPUMemUsed) != 1 {
		t.Errorf("GPUSamples = %d, samples %+v", tel.GPUSamples, tel.Samples)
	}
}

// TestSampler_NvidiaSMIVisibleDevices: on a host of two cards, a run with
// CUDA_VISIBLE_DEVICES=1 asks nvidia-smi about card 1 only, in every query.
func TestSampler_NvidiaSMIVisibleDevices(t *testing.T) {
	dir := pipelinetest.FakeSMI(t, "NVIDIA H200, 81920, 143771\n", "NVIDIA H200, 143771, 580.159.04\n", string(pipelinetest.ReadFile(t, "testdata/nvidia-smi/h200-plain.txt")))
	t.Setenv("CUDA_VISIBLE_DEVICES", "1")
	StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{NvidiaSMI: true, Interval: time.Hour}, nil).Stop()
	if _, ok := GPUInfo(pipelinetest.Context(t)); !ok {
		t.Fatal("GPUInfo failed")
	}
	calls := strings.Split(strings.TrimSpace(string(pipelinetest.ReadFile(t, filepath.Join(dir, "args.txt")))), "\n")
	if len(calls) != 3 {
		t.Fatalf("nvidia-smi calls = %q, want memory, info and header", calls)
	}
	for _, c := range calls {
		if !strings.HasSuffix(c, "--id=1") {
			t.Errorf("nvidia-smi %q: want --id=1 last", c)
		}
	}
}

func TestSMISelection(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"1", "1"},
		{"0, 2", "0,2"},
		{"GPU-8f2e5a4c-1d2b-4e6f-9a0b-123456789abc,3", "GPU-8f2e5a4c-1d2b-4e6f-9a0b-123456789abc,3"},
		{"MIG-0e1f2a3b-4c5d-6e7f-8091-a2b3c4d5e6f7", "MIG-0e1f2a3b-4c5d-6e7f-8091-a2b3c4d5e6f7"},
		{"1,x,2", "1"}, // CUDA stops at the first entry it cannot read
		{"-1", ""},
		{"none", ""},
	} {
		if got := smiSelection(c.in); got != c.want {
			t.Errorf("smiSelection(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSampler_NvidiaSMIMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	tel := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{NvidiaSMI: true, Interval: time.Hour}, nil).Stop()
	if tel.PeakGPUMemUsed != nil || tel.GPUMemTotal != nil || tel.GPUErrors != 0 {
		t.Errorf("without nvidia-smi: %+v", tel)
	}
}

// TestSampler_Concurrent stops a sampler while both loops run, under -race.
func TestSampler_Concurrent(t *testing.T) {
	pipelinetest.FakeSMI(t, "NVIDIA H200, 1, 2\n", "", "")
	srv, _ := sequenceServer(t, vllmMetrics(1, 0, 0.1, 0, 0, 0))
	ctx, cancel := context.WithCancel(pipelinetest.Context(t))
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			s := StartSampler(ctx, extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Millisecond, NvidiaSMI: true}, nil)
			time.Sleep(5 * time.Millisecond)
			s.Stop()
		})
	}
	wg.Wait()
	cancel()
}

// TestSampler_Flush checks that a sampler with a Flush holds at most
// TelemetryFlushSamples samples: the rest went to Flush, in order, none
// lost or repeated, and Flush's first error is kept.
func TestSampler_Flush(t *testing.T) {
	defer func(n int) { TelemetryFlushSamples = n }(TelemetryFlushSamples)
	TelemetryFlushSamples = 5
	srv, n := sequenceServer(t, vllmMetrics(1, 0, 0.1, 0, 0, 0))
	var flushed []Sample
	calls := 0
	flush := func(batch []Sample) error {
		calls++
		if len(batch) < TelemetryFlushSamples {
			t.Errorf("flushed %d samples, want at least %d", len(batch), TelemetryFlushSamples)
		}
		flushed = append(flushed, batch...)
		if calls == 2 {
			return fmt.Errorf("disk full")
		}
		return nil
	}
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Millisecond, Flush: flush}, nil)
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 12 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	tel := s.Stop()
	if calls < 2 || len(tel.Samples) >= TelemetryFlushSamples {
		t.Errorf("%d flushes, %d samples held; want 2 or more and under %d held", calls, len(tel.Samples), TelemetryFlushSamples)
	}
	all := append(flushed, tel.Samples...)
	perScrape := countSamples(Telemetry{Samples: all}, extractbench.MetricRunning)
	if perScrape != tel.Scrapes {
		t.Errorf("%d running samples flushed or held, want one per scrape: %d", perScrape, tel.Scrapes)
	}
	if !slices.IsSortedFunc(all, func(a, b Sample) int { return cmp.Compare(a.TNS, b.TNS) }) {
		t.Error("samples out of order")
	}
	if tel.FlushErr == nil || tel.FlushErr.Error() != "disk full" {
		t.Errorf("FlushErr = %v, want the second flush's error", tel.FlushErr)
	}
}

// TestSampler_ActiveScrapesOnly: with SamplerConfig.Active, the scrapes
// taken while no request runs (before and after the pass) start and end
// the counters' deltas but make no instantaneous peak: an idle engine's
// fuller KV cache or more running requests (another client's) do not become
// the pass's, and the active scrapes are counted. torch's peaks, maxima
// since the pass's reset, are read at every scrape.
func TestSampler_ActiveScrapesOnly(t *testing.T) {
	const torch = "# TYPE torch_cuda_max_memory_allocated_bytes gauge\ntorch_cuda_max_memory_allocated_bytes %g\n"
	srv, _ := sequenceServer(t,
		vllmMetrics(9, 9, 0.99, 2, 10, 100)+fmt.Sprintf(torch, 1e9), // before the pass: idle for this client
		vllmMetrics(3, 1, 0.40, 3, 11, 104)+fmt.Sprintf(torch, 2e9), // while it runs
		vllmMetrics(7, 7, 0.88, 5, 14, 120)+fmt.Sprintf(torch, 3e9), // after it
	)
	var active atomic.Bool
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Hour, Active: active.Load}, srv.Client())
	active.Store(true)
	s.scrapeOnce(pipelinetest.Context(t))
	active.Store(false)
	tel := s.Stop()
	if !eqPtr(tel.MaxRunning, 3) || !eqPtr(tel.MaxWaiting, 1) || !eqPtr(tel.PeakKVUsage, 0.4) {
		t.Errorf("MaxRunning, MaxWaiting, PeakKVUsage = %v, %v, %v; want 3, 1, 0.4 (the active scrape's)", deref(tel.MaxRunning), deref(tel.MaxWaiting), deref(tel.PeakKVUsage))
	}
	if !eqPtr(tel.PreemptionsDelta, 3) || !eqPtr(tel.PeakTorchAllocated, 3e9) {
		t.Errorf("PreemptionsDelta, PeakTorchAllocated = %v, %v; want 3 (first to last scrape) and 3e9 (the closing scrape)", deref(tel.PreemptionsDelta), deref(tel.PeakTorchAllocated))
	}
	if tel.ActiveScrapes != 1 || tel.Scrapes != 3 || !tel.Configured {
		t.Errorf("ActiveScrapes %d, Scrapes %d, Configured %v; want 1, 3, true", tel.ActiveScrapes, tel.Scrapes, tel.Configured)
	}
	if len(tel.Samples) == 0 {
		t.Error("no sample stored: the idle scrapes are observations too")
	}
}

// TestSampler_Kick: a kick scrapes at once, between ticks.
func TestSampler_Kick(t *testing.T) {
	srv, n := sequenceServer(t, vllmMetrics(0, 0, 0, 0, 0, 0))
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Hour}, srv.Client())
	s.Kick()
	for i := 0; n.Load() < 2; i++ { // the opening scrape, then the kick's
		if i > 10000 {
			t.Fatal("the kick did not scrape")
		}
		time.Sleep(time.Millisecond)
	}
	if tel := s.Stop(); tel.Scrapes != 3 {
		t.Errorf("Scrapes %d, want 3: opening, kick, closing", tel.Scrapes)
	}
}
