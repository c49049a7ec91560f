package builtin

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// vLLM's histogram buckets (seconds), so that tools reading vLLM's metrics
// read ours with the same resolution.
var (
	queueBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	ttftBuckets  = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	e2eBuckets   = queueBuckets
)

// histogram is a cumulative-bucket histogram as Prometheus exposes it.
type histogram struct {
	bounds []float64
	counts []uint64 // per bucket, not cumulative
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds))}
}

func (h *histogram) observe(v float64) {
	h.n++
	h.sum += v
	if i := sort.SearchFloat64s(h.bounds, v); i < len(h.bounds) {
		h.counts[i]++
	}
}

func (h *histogram) metric(labels []*dto.LabelPair) *dto.Metric {
	var cum uint64
	buckets := make([]*dto.Bucket, len(h.bounds))
	for i, b := range h.bounds {
		cum += h.counts[i]
		buckets[i] = &dto.Bucket{UpperBound: ptr(b), CumulativeCount: ptr(cum)}
	}
	return &dto.Metric{Label: labels, Histogram: &dto.Histogram{
		SampleCount: ptr(h.n), SampleSum: ptr(h.sum), Bucket: buckets,
	}}
}

// Stats is a snapshot of the engine's scheduler and counters, the same
// figures /metrics exposes.
type Stats struct {
	Running          int     // sequences decoded in the last step
	Waiting          int     // sequences waiting for admission (preempted ones included)
	KVBlocksTotal    int     // blocks in the pool
	KVBlocksUsed     int     // blocks held now
	KVUsage          float64 // used / total, 0-1
	PeakKVBlocksUsed int     // since start or the last reset of peaks
	Preemptions      int64   // sequences preempted (recomputed later)
	KVFailures       int64   // sequences failed because the KV cache was full (OnKVFull "fail")
	LockstepExpired  int64   // lockstep passes given up after LockstepPatience (the engine clock only)
	PromptTokens     int64   // prompt tokens of admitted requests, counted once per request
	GenerationTokens int64   // tokens generated
	RequestsFinished int64   // requests that ended with stop or length
	PeakAllocated    int64   // simulated torch max_memory_allocated: weights + peak KV in use
	PeakReserved     int64   // simulated torch max_memory_reserved: weights + the whole KV pool
}

// metrics holds everything /metrics exposes. The scheduler writes it; the
// HTTP handler reads it; mu guards both.
type metrics struct {
	mu         sync.Mutex
	model      string
	weights    int64
	blockBytes int64
	st         Stats
	queue      *histogram
	ttft       *histogram
	e2e        *histogram
}

func newMetrics(p Profile) *metrics {
	return &metrics{
		model:      p.Name,
		weights:    p.WeightBytes(),
		blockBytes: p.KVBytesPerToken() * int64(p.BlockSize),
		st:         Stats{KVBlocksTotal: p.KVBlocks()},
		queue:      newHistogram(queueBuckets),
		ttft:       newHistogram(ttftBuckets),
		e2e:        newHistogram(e2eBuckets),
	}
}

// update records the scheduler's state after a change.
func (m *metrics) update(running, waiting, used int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.Running, m.st.Waiting, m.st.KVBlocksUsed = running, waiting, used
	if used > m.st.PeakKVBlocksUsed {
		m.st.PeakKVBlocksUsed = used
	}
}

func (m *metrics) add(f func(st *Stats)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.st)
}

func (m *metrics) observe(h func(*metrics) *histogram, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h(m).observe(d.Seconds())
}

// resetPeaks starts the peak of KV in use again from what is in use now,
// as torch.cuda.reset_peak_memory_stats does.
func (m *metrics) resetPeaks() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.PeakKVBlocksUsed = m.st.KVBlocksUsed
}

func (m *metrics) snapshot() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.st
	if st.KVBlocksTotal > 0 {
		st.KVUsage = float64(st.KVBlocksUsed) / float64(st.KVBlocksTotal)
	}
	st.PeakAllocated = m.weights + int64(st.PeakKVBlocksUsed)*m.blockBytes
	st.PeakReserved = m.weights + int64(st.KVBlocksTotal)*m.blockBytes
	return st
}

// write exposes the metrics in Prometheus text format under vLLM's names.
func (m *metrics) write(w io.Writer) error {
	st := m.snapshot()
	labels := []*dto.LabelPair{{Name: ptr("model_name"), Value: ptr(m.model)}}
	gauge := func(name, help string, v float64) *dto.MetricFamily {
		return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_GAUGE.Enum(),
			Metric: []*dto.Metric{{Label: labels, Gauge: &dto.Gauge{Value: ptr(v)}}}}
	}
	counter := func(name, help string, v float64) *dto.MetricFamily {
		return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_COUNTER.Enum(),
			Metric: []*dto.Metric{{Label: labels, Counter: &dto.Counter{Value: ptr(v)}}}}
	}
	m.mu.Lock()
	hist := func(name, help string, h *histogram) *dto.MetricFamily {
		return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_HISTOGRAM.Enum(),
			Metric: []*dto.Metric{h.metric(labels)}}
	}
	families := []*dto.MetricFamily{
		gauge("vllm:num_requests_running", "Number of requests in model execution batches.", float64(st.Running)),
		gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", float64(st.Waiting)),
		gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", st.KVUsage),
		gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage (the name of vLLM before 0.10). 1 means 100 percent usage.", st.KVUsage),
		counter("vllm:num_preemptions_total", "Cumulative number of preemptions from the engine.", float64(st.Preemptions)),
		counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", float64(st.PromptTokens)),
		counter("vllm:generation_tokens_total", "Number of generation tokens processed.", float64(st.GenerationTokens)),
		hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", m.queue),
		hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m.ttft),
		hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m.e2e),
		gauge("torch_cuda_max_memory_allocated_bytes", "Simulated torch.cuda.max_memory_allocated: weights plus peak KV blocks in use.", float64(st.PeakAllocated)),
		gauge("torch_cuda_max_memory_reserved_bytes", "Simulated torch.cuda.max_memory_reserved: weights plus the whole KV pool.", float64(st.PeakReserved)),
	}
	m.mu.Unlock()
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return fmt.Errorf("write metric %s: %w", f.GetName(), err)
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
