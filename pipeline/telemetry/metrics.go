package telemetry

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/family"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// gaugeMetrics are sampled at each scrape, in this order, with how their
// label sets fold: sums for counts and bytes (vLLM labels by model_name, and
// by engine under data parallelism; SGLang by dp_rank; torch by device), max
// for a fraction.
var gaugeMetrics = []struct {
	name string
	max  bool
	hi   float64 // the largest possible value; the smallest is 0
}{
	{extractbench.MetricRunning, false, maxCount},
	{extractbench.MetricWaiting, false, maxCount},
	{extractbench.MetricKVUsage, true, 1},
	{extractbench.MetricKVTokens, false, maxCount},
	{extractbench.MetricPreemptions, false, maxCount},
	{extractbench.MetricTorchAlloc, false, maxBytes},
	{extractbench.MetricTorchReserve, false, maxBytes},
	{extractbench.MetricCaptures, false, maxCount},
	{extractbench.MetricEngineVRAM, false, maxBytes},
	{extractbench.MetricEngineMemory, false, maxBytes},
}

// The domains of engine figures. A value outside its figure's domain (or
// NaN, or infinite) cannot be a measurement: the figure is left out of the
// scrape (NULL, never summed into a peak or a delta) and the scrape notes it
// in refused, which the pass records as an event.
const (
	maxCount   = 1 << 40 // requests, tokens, preemptions, captures, histogram observations
	maxBytes   = 1 << 53 // memory: exact in a float64, and 8 PiB
	maxSeconds = 1 << 40 // a histogram's sum of seconds
)

// possible reports whether v lies in [0, hi].
func possible(v, hi float64) bool { return v >= 0 && v <= hi } // false for NaN

// histogramMetrics are read as _sum/_count (and buckets) at the first and
// last scrape; their difference covers the pass.
var histogramMetrics = []string{extractbench.MetricQueueTime, extractbench.MetricTTFT, extractbench.MetricE2E}

// scrape is one parsed telemetry answer, reduced to the canonical figures.
type scrape struct {
	family     string                       // the dialect read ("vllm-v1", "sglang", "ollama", ...); "" when none
	values     map[string]float64           // canonical gauge or counter -> folded value
	histograms map[string]histogramSnapshot // canonical histogram -> folded snapshot
	sources    map[string]string            // canonical metric -> the engine's name it was read from
	refused    map[string]float64           // canonical metric -> an impossible value it carried (not in values or histograms)
}

// histogramSnapshot is a histogram summed over its label sets.
type histogramSnapshot struct {
	Sum, Count float64
	Buckets    map[float64]float64 // upper bound -> cumulative count
}

// parseMetrics reads Prometheus text exposition and keeps the canonical
// figures of the dialect it detects (known's first: the engine's family,
// nil when unknown). Names are validated as UTF-8 so that "vllm:",
// "sglang:" and "llamacpp:" names parse whatever the library default.
func parseMetrics(r io.Reader, known *family.Family) (scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return scrape{}, fmt.Errorf("parse metrics: %w", err)
	}
	return readScrape(fams, known), nil
}

func newScrape(dialect string) scrape {
	return scrape{family: dialect, values: map[string]float64{}, histograms: map[string]histogramSnapshot{}, sources: map[string]string{}, refused: map[string]float64{}}
}

// readScrape folds the detected dialect's series onto the canonical names,
// each read from one source name only.
func readScrape(fams map[string]*dto.MetricFamily, known *family.Family) scrape {
	p, label := detectDialect(fams, known)
	s := newScrape(label)
	names := func(canon string) []string {
		if p != nil {
			if n, ok := p.Names[canon]; ok {
				return n
			}
		}
		return family.AnyDialect[canon]
	}
	for _, g := range gaugeMetrics {
		name, mf := firstPresent(fams, names(g.name))
		v, ok, bad := foldValues(mf, g.max, g.hi)
		s.keep(g.name, name, v, ok, bad)
	}
	for _, canon := range histogramMetrics {
		name, mf := firstPresent(fams, names(canon))
		h, ok, bad := foldHistogram(mf)
		switch {
		case bad != nil:
			s.refused[canon] = *bad
		case ok:
			s.histograms[canon] = h
			s.sources[canon] = name
		}
	}
	return s
}

// keep records a gauge's value read from name, or the impossible value
// bad that refused it.
func (s scrape) keep(canon, name string, v float64, ok bool, bad *float64) {
	switch {
	case bad != nil:
		s.refused[canon] = *bad
	case ok:
		s.values[canon] = v
		s.sources[canon] = name
	}
}

// parseJSON reads a family's JSON telemetry answer (f.Telemetry.JSON) onto
// the canonical gauges, each value held to its figure's domain as a
// Prometheus one is.
func parseJSON(body []byte, f *family.Family) (scrape, error) {
	readings, err := f.Telemetry.JSON(body)
	if err != nil {
		return scrape{}, fmt.Errorf("read %s telemetry: %w", f.Kind, err)
	}
	s := newScrape(f.Kind)
	for _, g := range gaugeMetrics {
		for _, r := range readings {
			if r.Metric != g.name {
				continue
			}
			v := r.Value
			if !possible(v, g.hi) {
				s.keep(g.name, r.Source, 0, false, &v)
			} else {
				s.keep(g.name, r.Source, v, true, nil)
			}
			break
		}
	}
	return s, nil
}

// replicaLabels mark copies of one scheduler's figures: SGLang started with
// --enable-metrics-for-all-schedulers reports the same batch from every
// tensor-, pipeline- and expert-parallel rank, and a multiprocess
// prometheus_client gauge may carry the writing process's pid. Series that
// differ only in these labels are one figure, not several to add.
var replicaLabels = map[string]bool{"tp_rank": true, "pp_rank": true, "moe_ep_rank": true, "pid": true}

// schedulerGroups groups mf's series by the scheduler that reported them:
// series differing only in replicaLabels fall in one group. When a family
// breaks a figure down by priority next to an aggregate series whose
// priority label is empty, only the aggregate is kept, so that a request is
// not counted twice.
func schedulerGroups(mf *dto.MetricFamily) [][]*dto.Metric {
	ms := mf.GetMetric()
	if agg := priorityAggregate(ms); agg != nil {
		ms = agg
	}
	var keys []string
	groups := map[string][]*dto.Metric{}
	for _, m := range ms {
		var b strings.Builder
		for _, lp := range m.GetLabel() {
			if replicaLabels[lp.GetName()] {
				continue
			}
			b.WriteString(lp.GetName())
			b.WriteByte(0)
			b.WriteString(lp.GetValue())
			b.WriteByte(0)
		}
		k := b.String()
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], m)
	}
	out := make([][]*dto.Metric, 0, len(keys))
	for _, k := range keys {
		out = append(out, groups[k])
	}
	return out
}

// priorityAggregate returns the series whose priority label is empty when
// others carry a priority; nil when there is no such aggregate.
func priorityAggregate(ms []*dto.Metric) []*dto.Metric {
	var agg []*dto.Metric
	broken := false
	for _, m := range ms {
		p, has := labelValue(m, "priority")
		switch {
		case has && p == "":
			agg = append(agg, m)
		case has:
			broken = true
		}
	}
	if !broken {
		return nil
	}
	return agg
}

func labelValue(m *dto.Metric, name string) (string, bool) {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue(), true
		}
	}
	return "", false
}

// metricValue is a gauge's, counter's or untyped sample's value; false for
// a series of another type.
func metricValue(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// foldValues folds a gauge or counter family to one value: replicas of one
// scheduler by max, schedulers by sum (or by max when useMax). A series
// whose value is not in [0, hi] (NaN and infinities included) makes the
// whole figure unknown for this scrape: the folded figure would be wrong,
// and one engine's impossible number must not pass as part of a sum. bad is
// then that value.
func foldValues(mf *dto.MetricFamily, useMax bool, hi float64) (float64, bool, *float64) {
	if !present(mf) {
		return 0, false, nil
	}
	acc, n := 0.0, 0
	for _, g := range schedulerGroups(mf) {
		v, ok := 0.0, false
		for _, m := range g {
			x, has := metricValue(m)
			if !has {
				continue
			}
			if !possible(x, hi) {
				return 0, false, &x
			}
			if !ok || x > v {
				v, ok = x, true
			}
		}
		if !ok {
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
	return acc, n > 0, nil
}

// foldHistogram sums a histogram family over its schedulers, taking one
// series (the one with most observations) for the replicas of each. A
// series with an impossible sum (NaN, infinite, negative, over maxSeconds)
// or count (over maxCount, its own or a bucket's) makes the histogram
// unknown for this scrape, as in foldValues; bad is then that number.
func foldHistogram(mf *dto.MetricFamily) (h histogramSnapshot, ok bool, bad *float64) {
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		return histogramSnapshot{}, false, nil
	}
	h = histogramSnapshot{Buckets: map[float64]float64{}}
	n := 0
	for _, g := range schedulerGroups(mf) {
		var best *dto.Histogram
		for _, m := range g {
			hm := m.GetHistogram()
			if hm == nil {
				continue
			}
			if x := impossibleHistogram(hm); x != nil {
				return histogramSnapshot{}, false, x
			}
			if best == nil || hm.GetSampleCount() > best.GetSampleCount() {
				best = hm
			}
		}
		if best == nil {
			continue
		}
		h.Sum += best.GetSampleSum()
		h.Count += float64(best.GetSampleCount())
		for _, b := range best.GetBucket() {
			h.Buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
		n++
	}
	return h, n > 0, nil
}

// impossibleHistogram returns the first number of hm outside its domain,
// nil when every one is possible.
func impossibleHistogram(hm *dto.Histogram) *float64 {
	if x := hm.GetSampleSum(); !possible(x, maxSeconds) {
		return &x
	}
	if x := float64(hm.GetSampleCount()); !possible(x, maxCount) {
		return &x
	}
	for _, b := range hm.GetBucket() {
		if x := float64(b.GetCumulativeCount()); !possible(x, maxCount) {
			return &x
		}
	}
	return nil
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
