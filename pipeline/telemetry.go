package pipeline

import (
	"context"
	"fmt"
	"io"
	"maps"
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
	// Flush, when set, receives the samples each time TelemetryFlushSamples
	// of them are pending (they are then dropped from memory), so that a
	// long pass does not hold hours of samples; Stop returns the rest. The
	// first error it returns is kept in Telemetry.FlushErr.
	Flush func([]Sample) error
}

// TelemetryFlushSamples is how many samples a Sampler with a Flush holds
// before handing them over: about a minute of a scrape of six metrics
// every 100 ms.
var TelemetryFlushSamples = 4096

// Sample is one sampled value on the run's clock.
type Sample struct {
	TNS    int64
	Metric string // the canonical metric name (vllm:num_requests_running, ...), or gpu_memory_used_bytes
	Value  float64
}

// Telemetry is what a Sampler saw during one pass. A nil figure was not
// available (no endpoint, metric absent, no successful scrape); it is never
// reported as 0.
type Telemetry struct {
	Samples  []Sample // those not handed to SamplerConfig.Flush already
	FlushErr error    // the first error of SamplerConfig.Flush

	// Family is the engine family whose metric names were read ("vllm-v1",
	// "vllm-v0", "sglang", "tgi", "llamacpp"), from the first scrape that
	// carried any; "" when none did. Sources maps each canonical metric to
	// the engine's name it was first read from.
	Family  string
	Sources map[string]string

	MaxRunning       *float64 // peak of requests the engine ran at once (vllm:num_requests_running or the family's equivalent)
	MaxWaiting       *float64 // peak of requests waiting in the engine's queue
	PeakKVUsage      *float64 // peak KV-cache usage fraction, 0-1
	PreemptionsDelta *float64 // preemptions during the pass (vllm:num_preemptions_total growth, SGLang retractions)
	CapturesDelta    *float64 // growth of engine_graph_captures_total: graphs captured or kernels compiled during the pass

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
	if s.tel.Family == "" {
		s.tel.Family = sc.family
	}
	for canon, name := range sc.sources {
		if _, seen := s.tel.Sources[canon]; !seen {
			if s.tel.Sources == nil {
				s.tel.Sources = map[string]string{}
			}
			s.tel.Sources[canon] = name
		}
	}
	// One sample per canonical metric per scrape, whichever of the engine's
	// names (and aliases) it was read from.
	for _, g := range gaugeMetrics {
		v, ok := sc.values[g.name]
		if !ok {
			continue
		}
		s.samples = append(s.samples, Sample{TNS: now, Metric: g.name, Value: v})
		if p, seen := s.peaks[g.name]; !seen || v > p {
			s.peaks[g.name] = v
		}
	}
	s.flushFull()
}

// flushFull hands the pending samples to the Flush, once there are
// TelemetryFlushSamples of them; s.mu is held.
func (s *Sampler) flushFull() {
	if s.cfg.Flush == nil || len(s.samples) < TelemetryFlushSamples {
		return
	}
	if err := s.cfg.Flush(s.samples); err != nil && s.tel.FlushErr == nil {
		s.tel.FlushErr = err
	}
	s.samples = make([]Sample, 0, TelemetryFlushSamples)
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
	s.flushFull()
	if s.tel.PeakGPUMemUsed == nil || u > *s.tel.PeakGPUMemUsed {
		s.tel.PeakGPUMemUsed = &u
	}
	s.tel.GPUMemTotal = &t
}

// summary builds the Telemetry; s.mu is held.
func (s *Sampler) summary() Telemetry {
	t := s.tel
	t.Samples = append([]Sample(nil), s.samples...)
	t.Sources = maps.Clone(s.tel.Sources)
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
	// A counter or histogram the first scrape lacks counts from zero:
	// Python's prometheus_client prints a labelled series only once it is
	// first used and TGI's exporter a metric only once it is first recorded
	// (SGLang's retraction counter appears at the first retraction). One read
	// under another name than at the first scrape (an engine swapped
	// mid-pass) is likewise counted from zero, as after a restart.
	t.PreemptionsDelta = s.counterDelta(metricPreemptions)
	t.CapturesDelta = s.counterDelta(metricCaptures)
	for _, name := range histogramMetrics {
		b, ok := s.last.histograms[name]
		if !ok {
			continue
		}
		var a histogramSnapshot
		if s.first.sources[name] == s.last.sources[name] {
			a = s.first.histograms[name]
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

// counterDelta is a counter's growth from the first to the last scrape of
// the pass, nil when the last scrape lacks it; s.mu is held.
func (s *Sampler) counterDelta(name string) *float64 {
	b, ok := s.last.values[name]
	if !ok {
		return nil
	}
	a := 0.0
	if s.first.sources[name] == s.last.sources[name] {
		a = s.first.values[name]
	}
	d := delta(a, b)
	return &d
}
