package pipeline

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"sync"
	"time"

	"github.com/extractbench/extractbench/pipeline/client"
)

// Telemetry timing bounds.
const (
	minSMIInterval = 250 * time.Millisecond // nvidia-smi costs tens of ms a call
	scrapeTimeout  = 2 * time.Second        // one /metrics GET
)

// SamplerConfig says what to sample during a pass.
type SamplerConfig struct {
	MetricsURL string        // the engine's Prometheus endpoint; "" for none
	Interval   time.Duration // DefaultTelemetryInterval when zero
	NvidiaSMI  bool          // also sample device memory with nvidia-smi, when it exists
}

// Sample is one sampled value on the run's clock.
type Sample struct {
	TNS    int64
	Metric string // the engine's metric name, or gpu_memory_used_bytes
	Value  float64
}

// Telemetry is what a Sampler saw during one pass. A nil figure was not
// available (no endpoint, metric absent, no successful scrape); it is never
// reported as 0.
type Telemetry struct {
	Samples []Sample

	MaxRunning       *float64 // peak of vllm:num_requests_running (requests the engine ran at once)
	MaxWaiting       *float64 // peak of vllm:num_requests_waiting
	PeakKVUsage      *float64 // peak KV-cache usage fraction, 0-1
	PreemptionsDelta *float64 // growth of vllm:num_preemptions_total

	// Engine-side histogram growth over the pass (seconds and counts), from
	// the first and the last successful scrape.
	QueueTimeSumDelta, QueueTimeCountDelta *float64
	TTFTSumDelta, TTFTCountDelta           *float64
	E2ESumDelta, E2ECountDelta             *float64
	Histograms                             map[string]HistogramDelta // by metric name, with buckets

	// PyTorch peaks (the transformers engine); allocated and reserved are
	// separate figures and are never added together.
	PeakTorchAllocated *float64
	PeakTorchReserved  *float64

	PeakGPUMemUsed *float64 // nvidia-smi memory.used, bytes, summed over cards
	GPUMemTotal    *float64 // nvidia-smi memory.total, bytes, summed over cards

	Scrapes, ScrapeErrors int
	LastScrapeError       string
	GPUSamples, GPUErrors int
	LastGPUError          string
}

// Sampler samples engine metrics and device memory in the background from
// StartSampler until Stop, which owns and waits for its goroutines.
type Sampler struct {
	clock  client.Clock
	cfg    SamplerConfig
	hc     *http.Client
	parent context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	samples  []Sample
	peaks    map[string]float64
	first    *scrape
	last     *scrape
	tel      Telemetry // counters and GPU figures, filled as samples come
	stopped  bool
	stopOnce sync.Once
}

// StartSampler scrapes cfg.MetricsURL once before returning, so that the
// pass's deltas start before its first request, then keeps sampling every
// cfg.Interval until Stop.
func StartSampler(ctx context.Context, clock client.Clock, cfg SamplerConfig, httpClient *http.Client) *Sampler {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultTelemetryInterval
	}
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	lctx, cancel := context.WithCancel(ctx)
	s := &Sampler{clock: clock, cfg: cfg, hc: httpClient, parent: ctx, cancel: cancel, peaks: map[string]float64{}}
	if cfg.MetricsURL != "" {
		s.scrapeOnce(lctx)
		s.wg.Add(1)
		go s.every(lctx, cfg.Interval, s.scrapeOnce)
	}
	if cfg.NvidiaSMI {
		if bin, err := exec.LookPath("nvidia-smi"); err == nil {
			// A first reading before the pass starts gives its baseline.
			s.sampleGPU(lctx, bin)
			s.wg.Add(1)
			go s.every(lctx, max(cfg.Interval, minSMIInterval), func(ctx context.Context) { s.sampleGPU(ctx, bin) })
		}
	}
	return s
}

// every runs f each interval until ctx ends. A slow f delays the next tick
// rather than piling calls up.
func (s *Sampler) every(ctx context.Context, interval time.Duration, f func(context.Context)) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(ctx)
		}
	}
}

// Stop ends sampling, scrapes once more so that the deltas cover the whole
// pass, and returns what was seen. Later calls return the same Telemetry.
func (s *Sampler) Stop() Telemetry {
	s.stopOnce.Do(func() {
		s.cancel()
		s.wg.Wait()
		if s.cfg.MetricsURL != "" {
			s.scrapeOnce(context.WithoutCancel(s.parent))
		}
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summary()
}

func (s *Sampler) scrapeOnce(ctx context.Context) {
	sc, err := s.fetch(ctx)
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if err != nil {
		if ctx.Err() != nil {
			return // the sampler is stopping; not the engine's fault
		}
		s.tel.ScrapeErrors++
		s.tel.LastScrapeError = err.Error()
		return
	}
	s.tel.Scrapes++
	if s.first == nil {
		s.first = &sc
	}
	s.last = &sc
	for _, g := range gaugeMetrics {
		v, ok := sc.values[g.name]
		if !ok {
			continue
		}
		name := g.name
		if name == metricKVUsageOld {
			name = metricKVUsage // one series whatever the vLLM version
		}
		s.samples = append(s.samples, Sample{TNS: now, Metric: name, Value: v})
		if p, seen := s.peaks[name]; !seen || v > p {
			s.peaks[name] = v
		}
	}
}

func (s *Sampler) fetch(ctx context.Context) (scrape, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.MetricsURL, nil)
	if err != nil {
		return scrape{}, fmt.Errorf("build metrics request: %w", err)
	}
	res, err := s.hc.Do(req)
	if err != nil {
		return scrape{}, fmt.Errorf("scrape %s: %w", s.cfg.MetricsURL, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return scrape{}, fmt.Errorf("scrape %s: HTTP %d", s.cfg.MetricsURL, res.StatusCode)
	}
	sc, err := parseMetrics(res.Body)
	if err != nil {
		return scrape{}, fmt.Errorf("scrape %s: %w", s.cfg.MetricsURL, err)
	}
	return sc, nil
}

func (s *Sampler) sampleGPU(ctx context.Context, bin string) {
	out, err := runSMI(ctx, bin, "--query-gpu=name,memory.used,memory.total", "--format=csv,noheader,nounits")
	var used, total int64
	if err == nil {
		used, total, err = parseSMIMemory(out)
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.tel.GPUErrors++
			s.tel.LastGPUError = err.Error()
		}
		return
	}
	s.tel.GPUSamples++
	u, t := float64(used), float64(total)
	s.samples = append(s.samples, Sample{TNS: now, Metric: metricGPUMemUsed, Value: u})
	if s.tel.PeakGPUMemUsed == nil || u > *s.tel.PeakGPUMemUsed {
		s.tel.PeakGPUMemUsed = &u
	}
	s.tel.GPUMemTotal = &t
}

// summary builds the Telemetry; s.mu is held.
func (s *Sampler) summary() Telemetry {
	t := s.tel
	t.Samples = append([]Sample(nil), s.samples...)
	peak := func(name string) *float64 {
		if v, ok := s.peaks[name]; ok {
			return &v
		}
		return nil
	}
	t.MaxRunning = peak(metricRunning)
	t.MaxWaiting = peak(metricWaiting)
	t.PeakKVUsage = peak(metricKVUsage)
	t.PeakTorchAllocated = peak(metricTorchAlloc)
	t.PeakTorchReserved = peak(metricTorchReserve)
	if s.first == nil || s.last == nil {
		return t
	}
	if a, ok := s.first.values[metricPreemptions]; ok {
		if b, ok := s.last.values[metricPreemptions]; ok {
			d := delta(a, b)
			t.PreemptionsDelta = &d
		}
	}
	for _, name := range histogramMetrics {
		a, okA := s.first.histograms[name]
		b, okB := s.last.histograms[name]
		if !okA || !okB {
			continue
		}
		d := histogramDelta(a, b)
		if t.Histograms == nil {
			t.Histograms = map[string]HistogramDelta{}
		}
		t.Histograms[name] = d
		sum, count := d.Sum, d.Count
		switch name {
		case metricQueueTime:
			t.QueueTimeSumDelta, t.QueueTimeCountDelta = &sum, &count
		case metricTTFT:
			t.TTFTSumDelta, t.TTFTCountDelta = &sum, &count
		case metricE2E:
			t.E2ESumDelta, t.E2ECountDelta = &sum, &count
		}
	}
	return t
}
