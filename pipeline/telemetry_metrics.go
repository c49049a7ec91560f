package pipeline

import (
	"fmt"
	"io"
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Engine metric names, as vLLM exposes them (prometheus_client writes a
// counter's family with its _total suffix); the transformers engine uses
// the torch_cuda_* names.
const (
	metricRunning      = "vllm:num_requests_running"
	metricWaiting      = "vllm:num_requests_waiting"
	metricKVUsage      = "vllm:kv_cache_usage_perc"
	metricKVUsageOld   = "vllm:gpu_cache_usage_perc" // vLLM before the V1 engine
	metricPreemptions  = "vllm:num_preemptions_total"
	metricTorchAlloc   = "torch_cuda_max_memory_allocated_bytes"
	metricTorchReserve = "torch_cuda_max_memory_reserved_bytes"
	metricQueueTime    = "vllm:request_queue_time_seconds"
	metricTTFT         = "vllm:time_to_first_token_seconds"
	metricE2E          = "vllm:e2e_request_latency_seconds"
	metricGPUMemUsed   = "gpu_memory_used_bytes"
)

// gaugeMetrics are sampled at each scrape, with how to fold label sets:
// sums for counts and bytes (vLLM labels by model_name, and by engine under
// data parallelism; torch by device), max for a fraction.
var gaugeMetrics = []struct {
	name string
	max  bool
}{
	{metricRunning, false},
	{metricWaiting, false},
	{metricKVUsage, true},
	{metricKVUsageOld, true},
	{metricPreemptions, false},
	{metricTorchAlloc, false},
	{metricTorchReserve, false},
}

// histogramMetrics are read as _sum/_count (and buckets) at the first and
// last scrape; their difference covers the pass.
var histogramMetrics = []string{metricQueueTime, metricTTFT, metricE2E}

// scrape is one parsed /metrics answer, reduced to what telemetry keeps.
type scrape struct {
	values     map[string]float64
	histograms map[string]histogramSnapshot
}

// histogramSnapshot is a histogram summed over its label sets.
type histogramSnapshot struct {
	Sum, Count float64
	Buckets    map[float64]float64 // upper bound -> cumulative count
}

// parseMetrics reads Prometheus text exposition. Names are validated as
// UTF-8 so that vLLM's "vllm:" names parse whatever the library default.
func parseMetrics(r io.Reader) (scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return scrape{}, fmt.Errorf("parse metrics: %w", err)
	}
	s := scrape{values: map[string]float64{}, histograms: map[string]histogramSnapshot{}}
	for _, g := range gaugeMetrics {
		if v, ok := foldValues(fams[g.name], g.max); ok {
			s.values[g.name] = v
		}
	}
	for _, name := range histogramMetrics {
		if h, ok := foldHistogram(fams[name]); ok {
			s.histograms[name] = h
		}
	}
	return s, nil
}

func foldValues(mf *dto.MetricFamily, useMax bool) (float64, bool) {
	if mf == nil || len(mf.GetMetric()) == 0 {
		return 0, false
	}
	acc, n := 0.0, 0
	for _, m := range mf.GetMetric() {
		var v float64
		switch {
		case m.Gauge != nil:
			v = m.GetGauge().GetValue()
		case m.Counter != nil:
			v = m.GetCounter().GetValue()
		case m.Untyped != nil:
			v = m.GetUntyped().GetValue()
		default:
			continue
		}
		if math.IsNaN(v) {
			continue
		}
		switch {
		case n == 0:
			acc = v
		case useMax:
			acc = math.Max(acc, v)
		default:
			acc += v
		}
		n++
	}
	return acc, n > 0
}

func foldHistogram(mf *dto.MetricFamily) (histogramSnapshot, bool) {
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		return histogramSnapshot{}, false
	}
	h := histogramSnapshot{Buckets: map[float64]float64{}}
	n := 0
	for _, m := range mf.GetMetric() {
		hm := m.GetHistogram()
		if hm == nil {
			continue
		}
		h.Sum += hm.GetSampleSum()
		h.Count += float64(hm.GetSampleCount())
		for _, b := range hm.GetBucket() {
			h.Buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
		n++
	}
	return h, n > 0
}

// BucketDelta is one histogram bucket's growth over a pass.
type BucketDelta struct {
	UpperBound float64 // +Inf for the last bucket
	Count      float64 // cumulative: observations <= UpperBound during the pass
}

// HistogramDelta is an engine histogram's growth between the first and last
// scrape of a pass.
type HistogramDelta struct {
	Sum, Count float64
	Buckets    []BucketDelta
}

// delta returns last-first; a counter that went backwards means the engine
// restarted, and then last alone is what the pass saw.
func delta(first, last float64) float64 {
	if last < first {
		return last
	}
	return last - first
}

func histogramDelta(first, last histogramSnapshot) HistogramDelta {
	restarted := last.Count < first.Count
	d := HistogramDelta{Sum: delta(first.Sum, last.Sum), Count: delta(first.Count, last.Count)}
	if restarted {
		d.Sum, d.Count = last.Sum, last.Count
		first = histogramSnapshot{}
	}
	for ub, c := range last.Buckets {
		d.Buckets = append(d.Buckets, BucketDelta{UpperBound: ub, Count: math.Max(0, c-first.Buckets[ub])})
	}
	sort.Slice(d.Buckets, func(i, j int) bool { return d.Buckets[i].UpperBound < d.Buckets[j].UpperBound })
	return d
}
