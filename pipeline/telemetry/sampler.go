package telemetry

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/sourcegraph/conc"
	"github.com/sourcegraph/conc/panics"
)

// Telemetry timing bounds.
const (
	minSMIInterval = 250 * time.Millisecond // nvidia-smi costs tens of ms a call
	scrapeTimeout  = 2 * time.Second        // one /metrics GET
	// stopGrace is how long Stop lets a scrape in flight finish before it
	// cancels it: the scrape the pass's last request kicked is often still
	// being read when that request ends, and it is one of the pass's own.
	stopGrace = 250 * time.Millisecond
)

// SamplerConfig says what to sample during a pass.
type SamplerConfig struct {
	// Family is the engine's family, whose telemetry source (Prometheus text,
	// or a JSON endpoint such as Ollama's /api/ps) says how an endpoint's
	// answer is read; nil: unknown, read as Prometheus text in whichever
	// dialect it carries.
	Family     *family.Family
	MetricsURL string // the engine's telemetry endpoint; "" for none
	// Endpoints are the telemetry endpoints of an engine's replicas, all
	// scraped at each tick; when set, MetricsURL is not read.
	Endpoints []MetricsEndpoint
	Interval  time.Duration // protocol.DefaultTelemetryInterval when zero
	NvidiaSMI bool          // also sample device memory with nvidia-smi, when it exists
	// Flush, when set, receives the samples each time TelemetryFlushSamples
	// of them are pending (they are then dropped from memory), so that a
	// long pass does not hold hours of samples; Stop returns the rest. The
	// first error it returns is kept in Telemetry.FlushErr.
	Flush func([]Sample) error
	// Active, when set, reports whether the pass has requests in flight. A
	// scrape sent while none is (the pass's bounding scrapes, which start
	// the counters' deltas and end them, or a tick between two requests)
	// is stored, but the instantaneous gauges' peaks (running, waiting, KV
	// cache) are made of the scrapes sent while requests ran only: an idle
	// engine's 0 is not the pass's figure. Nil: every scrape counts.
	Active func() bool
}

// MetricsEndpoint is one replica's telemetry endpoint: URL is scraped,
// Name labels its samples (the replica's URL as the protocol writes it).
type MetricsEndpoint struct {
	Name string
	URL  string
}

// TelemetryFlushSamples is how many samples a Sampler with a Flush holds
// before handing them over: about a minute of a scrape of six metrics
// every 100 ms.
var TelemetryFlushSamples = 4096

// Sample is one sampled value on the run's clock.
type Sample struct {
	TNS      int64
	Metric   string // the canonical metric name (vllm:num_requests_running, ...), or gpu_memory_used_bytes
	Value    float64
	Endpoint string // the replica whose /metrics gave it; "" for nvidia-smi
}

// Telemetry is what a Sampler saw during one pass. A nil figure was not
// available (no endpoint, metric absent, no successful scrape); it is never
// reported as 0.
type Telemetry struct {
	Samples  []Sample // those not handed to SamplerConfig.Flush already
	FlushErr error    // the first error of SamplerConfig.Flush

	// Family is the dialect of the figures read ("vllm-v1", "vllm-v0",
	// "sglang", "tgi", "llamacpp", "ollama": family.Prometheus.Dialect, or
	// the family of a JSON source), from the first scrape that carried any;
	// "" when none did. Sources maps each canonical metric to
	// the engine's name it was first read from.
	Family  string
	Sources map[string]string

	// Figures of several replicas fold at each tick (the replicas are
	// scraped concurrently and stamped with one instant) as an engine's
	// label sets do: counts and
	// bytes are summed over endpoints, the KV fraction takes the fullest;
	// the peak is then taken over the pass. Counter and histogram growth is
	// each endpoint's, summed.
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

	Scrapes, ScrapeErrors int // one per endpoint per tick
	// ActiveScrapes counts the ticks at which every endpoint's metrics were
	// scraped while the pass had requests in flight (SamplerConfig.Active)
	// and at least one answered: what MaxRunning, MaxWaiting and PeakKVUsage
	// rest on. Fewer than MinActiveScrapes flags the pass
	// (passes.telemetry_samples).
	ActiveScrapes int
	// Configured: an engine metrics endpoint was scraped, or tried; false
	// when the engine has none (ActiveScrapes is then not a figure).
	Configured            bool
	LastScrapeError       string
	GPUSamples, GPUErrors int
	LastGPUError          string

	// Refused counts, per canonical metric, the scrapes (one per endpoint
	// per tick) whose value could not be true (NaN, infinite, outside the
	// figure's domain: readScrape) and was left out, so that the figure is
	// NULL or made of the other scrapes; the pass records an event.
	Refused map[string]RefusedFigure
}

// RefusedFigure is how often one metric's value was refused during a pass,
// and the first value refused.
type RefusedFigure struct {
	Scrapes int
	First   float64
}

// MinActiveScrapes is the fewest scrapes taken while a pass's requests ran
// that its engine peaks may rest on without a flag: one scrape is one
// instant of the pass, not its peak.
const MinActiveScrapes = 2

// instantGauges are the gauges that say what the engine holds at the
// instant of the scrape: their peaks are made of active scrapes only
// (SamplerConfig.Active). torch's peaks are maxima since the pass's
// reset_peaks, which the closing scrape reads whole.
var instantGauges = map[string]bool{extractbench.MetricRunning: true, extractbench.MetricWaiting: true, extractbench.MetricKVUsage: true, extractbench.MetricKVTokens: true}

// Sampler samples engine metrics and device memory in the background from
// StartSampler until Stop, which owns and waits for its goroutines.
type Sampler struct {
	clock  extractbench.Clock
	cfg    SamplerConfig
	hc     *http.Client
	parent context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// kicks ask the scrape and nvidia-smi loops for a sample now (Kick);
	// quit, closed by Stop, ends the loops without cancelling a sample in
	// flight (stopGrace).
	kickMetrics, kickGPU chan struct{}
	quit                 chan struct{}

	mu       sync.Mutex
	samples  []Sample
	peaks    map[string]float64
	eps      []*endpointState
	tel      Telemetry // counters and GPU figures, filled as samples come
	stopped  bool
	stopOnce sync.Once
}

// endpointState is one scraped endpoint and the first and last scrape of
// it that succeeded during the pass.
type endpointState struct {
	MetricsEndpoint
	first, last *scrape
}

// StartSampler scrapes the engine's metrics (cfg.Endpoints, else
// cfg.MetricsURL) once before returning, so that the pass's deltas start
// before its first request, then keeps sampling every cfg.Interval until Stop.
func StartSampler(ctx context.Context, clock extractbench.Clock, cfg SamplerConfig, httpClient *http.Client) *Sampler {
	if cfg.Interval <= 0 {
		cfg.Interval = protocol.DefaultTelemetryInterval
	}
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	lctx, cancel := context.WithCancel(ctx)
	s := &Sampler{clock: clock, cfg: cfg, hc: httpClient, parent: ctx, cancel: cancel, peaks: map[string]float64{},
		kickMetrics: make(chan struct{}, 1), kickGPU: make(chan struct{}, 1), quit: make(chan struct{})}
	for _, ep := range cfg.Endpoints {
		s.eps = append(s.eps, &endpointState{MetricsEndpoint: ep})
	}
	if len(s.eps) == 0 && cfg.MetricsURL != "" {
		s.eps = []*endpointState{{MetricsEndpoint: MetricsEndpoint{URL: cfg.MetricsURL}}}
	}
	if len(s.eps) > 0 {
		s.scrapeOnce(lctx)
		s.wg.Add(1)
		go s.every(lctx, cfg.Interval, s.kickMetrics, s.scrapeOnce)
	}
	if cfg.NvidiaSMI {
		if bin, err := exec.LookPath("nvidia-smi"); err == nil {
			// A first reading before the pass starts gives its baseline.
			s.sampleGPU(lctx, bin)
			s.wg.Add(1)
			go s.every(lctx, max(cfg.Interval, minSMIInterval), s.kickGPU, func(ctx context.Context) { s.sampleGPU(ctx, bin) })
		}
	}
	return s
}

// Kick asks for a sample now, besides the ticks, without waiting for it:
// the runner kicks when a pass's first request is sent and when its last
// one is, so that a pass shorter than the interval is sampled while its
// requests run. A kick while one is pending is dropped.
func (s *Sampler) Kick() {
	for _, c := range []chan struct{}{s.kickMetrics, s.kickGPU} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// every runs f each interval, and at each kick, until ctx ends. A slow f
// delays the next tick rather than piling calls up.
func (s *Sampler) every(ctx context.Context, interval time.Duration, kick <-chan struct{}, f func(context.Context)) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		case <-t.C:
		case <-kick:
		}
		select {
		case <-s.quit: // Stop came with the tick: no new sample
			return
		default:
		}
		f(ctx)
	}
}

// Stop ends sampling (a sample in flight gets stopGrace to finish), scrapes
// once more so that the deltas cover the whole pass, and returns what was
// seen. Later calls return the same Telemetry.
func (s *Sampler) Stop() Telemetry {
	s.stopOnce.Do(func() {
		close(s.quit)
		grace := time.AfterFunc(stopGrace, s.cancel) // a scrape in flight may finish
		s.wg.Wait()
		grace.Stop()
		s.cancel()
		if len(s.eps) > 0 {
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

// scrapeOnce scrapes every endpoint at once and records their samples at
// one instant, so that the figures of several replicas add up per scrape.
func (s *Sampler) scrapeOnce(ctx context.Context) {
	active := s.cfg.Active == nil || s.cfg.Active() // as the scrape is sent
	scs := make([]scrape, len(s.eps))
	errs := make([]error, len(s.eps))
	if len(s.eps) == 1 {
		scs[0], errs[0] = s.safeFetch(ctx, s.eps[0].URL)
	} else {
		var wg conc.WaitGroup // owns one scrape per replica
		for i, ep := range s.eps {
			wg.Go(func() { scs[i], errs[i] = s.safeFetch(ctx, ep.URL) })
		}
		wg.Wait()
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	t := tick{folded: map[string]float64{}, refused: map[string]bool{}}
	for i, ep := range s.eps {
		switch err := errs[i]; {
		case err == nil:
			s.record(ep, scs[i], now, &t)
		case ctx.Err() == nil: // else the sampler is stopping; not the engine's fault
			s.tel.ScrapeErrors++
			s.tel.LastScrapeError = err.Error()
		}
	}
	if t.answered && active {
		s.tel.ActiveScrapes++
	}
	for name, v := range t.folded {
		if t.refused[name] || (!active && instantGauges[name]) {
			continue
		}
		if p, seen := s.peaks[name]; !seen || v > p {
			s.peaks[name] = v
		}
	}
	s.flushFull()
}

// tick is what the endpoints of one scrape gave: each gauge folded over
// them, the figures one of them refused (the others' do not make the
// tick's figure), and whether any answered.
type tick struct {
	folded   map[string]float64
	refused  map[string]bool
	answered bool
}

// record keeps one endpoint's successful scrape sc: it is the endpoint's
// first or last of the pass, its refusals and sources are counted, and
// its gauges are sampled (one sample per canonical metric, whichever of
// the engine's names it was read from) and folded into t; s.mu is held.
func (s *Sampler) record(ep *endpointState, sc scrape, now int64, t *tick) {
	s.tel.Scrapes++
	t.answered = true
	if ep.first == nil {
		ep.first = &sc
	}
	ep.last = &sc
	if s.tel.Family == "" {
		s.tel.Family = sc.family
	}
	for canon, x := range sc.refused {
		r, seen := s.tel.Refused[canon]
		if !seen {
			r.First = x
		}
		r.Scrapes++
		s.tel.Refused = setKey(s.tel.Refused, canon, r)
		t.refused[canon] = true
	}
	for canon, name := range sc.sources {
		if _, seen := s.tel.Sources[canon]; !seen {
			s.tel.Sources = setKey(s.tel.Sources, canon, name)
		}
	}
	for _, g := range gaugeMetrics {
		v, ok := sc.values[g.name]
		if !ok {
			continue
		}
		s.samples = append(s.samples, Sample{TNS: now, Metric: g.name, Value: v, Endpoint: ep.Name})
		switch f, seen := t.folded[g.name]; {
		case !seen:
			t.folded[g.name] = v
		case g.max:
			t.folded[g.name] = max(f, v)
		default:
			t.folded[g.name] = f + v
		}
	}
}

// setKey sets m[k] = v, making m when it is nil.
func setKey[V any](m map[string]V, k string, v V) map[string]V {
	if m == nil {
		m = map[string]V{}
	}
	m[k] = v
	return m
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

// safeFetch is fetch with a panic in it (a parser bug on an engine's
// output, a broken transport) caught and returned as the scrape's error:
// the scrape fails and is counted, the run goes on and says why, instead
// of the process dying in a scraper goroutine.
func (s *Sampler) safeFetch(ctx context.Context, metricsURL string) (sc scrape, err error) {
	var pc panics.Catcher
	pc.Try(func() { sc, err = s.fetch(ctx, metricsURL) })
	if r := pc.Recovered(); r != nil {
		return scrape{}, fmt.Errorf("scrape %s: panic: %v", metricsURL, r.Value)
	}
	return sc, err
}

// fetch scrapes one endpoint and reads its answer the way the engine's
// family publishes its telemetry: Prometheus text, or its JSON endpoint.
func (s *Sampler) fetch(ctx context.Context, metricsURL string) (scrape, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return scrape{}, fmt.Errorf("build metrics request: %w", err)
	}
	res, err := s.hc.Do(req)
	if err != nil {
		return scrape{}, fmt.Errorf("scrape %s: %w", metricsURL, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return scrape{}, fmt.Errorf("scrape %s: HTTP %d", metricsURL, res.StatusCode)
	}
	var sc scrape
	if f := s.cfg.Family; f != nil && f.Telemetry.JSON != nil {
		var b []byte
		if b, err = io.ReadAll(io.LimitReader(res.Body, maxJSONTelemetry)); err == nil {
			sc, err = parseJSON(b, f)
		}
	} else {
		sc, err = parseMetrics(res.Body, s.cfg.Family)
	}
	if err != nil {
		return scrape{}, fmt.Errorf("scrape %s: %w", metricsURL, err)
	}
	return sc, nil
}

// maxJSONTelemetry bounds a JSON telemetry answer: Ollama's /api/ps is a
// few hundred bytes a loaded model.
const maxJSONTelemetry = 1 << 20

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
	s.samples = append(s.samples, Sample{TNS: now, Metric: extractbench.MetricGPUMemUsed, Value: u})
	s.flushFull()
	if s.tel.PeakGPUMemUsed == nil || u > *s.tel.PeakGPUMemUsed {
		s.tel.PeakGPUMemUsed = &u
	}
	s.tel.GPUMemTotal = &t
}

// summary builds the Telemetry; s.mu is held.
func (s *Sampler) summary() Telemetry {
	t := s.tel
	t.Configured = len(s.eps) > 0
	t.Samples = append([]Sample(nil), s.samples...)
	t.Sources = maps.Clone(s.tel.Sources)
	t.Refused = maps.Clone(s.tel.Refused)
	peak := func(name string) *float64 {
		if v, ok := s.peaks[name]; ok {
			return &v
		}
		return nil
	}
	t.MaxRunning = peak(extractbench.MetricRunning)
	t.MaxWaiting = peak(extractbench.MetricWaiting)
	t.PeakKVUsage = peak(extractbench.MetricKVUsage)
	t.PeakTorchAllocated = peak(extractbench.MetricTorchAlloc)
	t.PeakTorchReserved = peak(extractbench.MetricTorchReserve)
	// A counter or histogram the first scrape lacks counts from zero:
	// Python's prometheus_client prints a labelled series only once it is
	// first used and TGI's exporter a metric only once it is first recorded
	// (SGLang's retraction counter appears at the first retraction). One read
	// under another name than at the first scrape (an engine swapped
	// mid-pass) is likewise counted from zero, as after a restart. Each
	// endpoint's growth is its own; replicas' add up.
	for _, ep := range s.eps {
		if ep.first == nil || ep.last == nil {
			continue
		}
		t.PreemptionsDelta = addPtr(t.PreemptionsDelta, ep.counterDelta(extractbench.MetricPreemptions))
		t.CapturesDelta = addPtr(t.CapturesDelta, ep.counterDelta(extractbench.MetricCaptures))
		for _, name := range histogramMetrics {
			b, ok := ep.last.histograms[name]
			if _, refused := ep.first.refused[name]; !ok || refused {
				continue // unknown at the end, or at the start: not counted from zero
			}
			var a histogramSnapshot
			if ep.first.sources[name] == ep.last.sources[name] {
				a = ep.first.histograms[name]
			}
			if t.Histograms == nil {
				t.Histograms = map[string]HistogramDelta{}
			}
			t.Histograms[name] = addHistograms(t.Histograms[name], histogramDelta(a, b))
		}
	}
	for name, d := range t.Histograms {
		sum, count := d.Sum, d.Count
		switch name {
		case extractbench.MetricQueueTime:
			t.QueueTimeSumDelta, t.QueueTimeCountDelta = &sum, &count
		case extractbench.MetricTTFT:
			t.TTFTSumDelta, t.TTFTCountDelta = &sum, &count
		case extractbench.MetricE2E:
			t.E2ESumDelta, t.E2ECountDelta = &sum, &count
		}
	}
	return t
}

// addPtr adds two optional figures: nil only when both are.
func addPtr(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	v := *a + *b
	return &v
}

// addHistograms adds two endpoints' histogram growth, bucket by bucket.
func addHistograms(a, b HistogramDelta) HistogramDelta {
	out := HistogramDelta{Sum: a.Sum + b.Sum, Count: a.Count + b.Count}
	counts := map[float64]float64{}
	for _, bk := range append(slices.Clone(a.Buckets), b.Buckets...) {
		counts[bk.UpperBound] += bk.Count
	}
	for ub, c := range counts {
		out.Buckets = append(out.Buckets, BucketDelta{UpperBound: ub, Count: c})
	}
	slices.SortFunc(out.Buckets, func(x, y BucketDelta) int { return cmp.Compare(x.UpperBound, y.UpperBound) })
	return out
}

// counterDelta is a counter's growth from the endpoint's first to its last
// scrape of the pass, nil when the last scrape lacks it or the first one
// refused it; the sampler's mu is held.
func (ep *endpointState) counterDelta(name string) *float64 {
	b, ok := ep.last.values[name]
	if _, refused := ep.first.refused[name]; !ok || refused {
		return nil // unknown at the end, or at the start: not counted from zero
	}
	a := 0.0
	if ep.first.sources[name] == ep.last.sources[name] {
		a = ep.first.values[name]
	}
	d := delta(a, b)
	return &d
}
