package telemetry

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

func fp(v float64) *float64 { return &v }

// readFixture returns a recorded /metrics text from testdata/metrics.
func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "metrics", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// familyCase is one engine family's /metrics fixture and the canonical
// figures it must yield (nil: the family does not expose it).
type familyCase struct {
	file, kind, dialect          string
	running, waiting, kv, tokens *float64
	preemptions                  *float64
	queueSum, queueCount         *float64
	kvSource                     string
	histograms                   []string
}

// TestMetricsFamilies parses one /metrics text per engine family, checks
// every canonical figure it yields, then samples it three times, as an
// engine of unknown kind and as one of its family, and checks that each
// canonical metric was stored exactly once per scrape, under its
// canonical name only.
func TestMetricsFamilies(t *testing.T) {
	tests := []familyCase{
		{file: "vllm_v1.txt", kind: "vllm", dialect: "vllm-v1", running: fp(12), waiting: fp(3), kv: fp(0.4375), preemptions: fp(2),
			queueSum: fp(1.25), queueCount: fp(40), kvSource: "vllm:kv_cache_usage_perc",
			histograms: []string{extractbench.MetricQueueTime, extractbench.MetricTTFT, extractbench.MetricE2E}},
		{file: "vllm_v0.txt", kind: "vllm", dialect: "vllm-v0", running: fp(7), waiting: fp(5), kv: fp(0.9123), preemptions: fp(14),
			queueSum: fp(31.5), queueCount: fp(120), kvSource: "vllm:gpu_cache_usage_perc",
			histograms: []string{extractbench.MetricQueueTime, extractbench.MetricTTFT, extractbench.MetricE2E}},
		// Tensor parallel 2 with --enable-metrics-for-all-schedulers: each
		// scheduler figure is printed once per rank and must count once.
		{file: "sglang.txt", kind: "sglang", dialect: "sglang", running: fp(24), waiting: fp(6), kv: fp(0.62), tokens: fp(101580), preemptions: fp(3),
			queueSum: fp(8.4), queueCount: fp(200), kvSource: "sglang:token_usage",
			histograms: []string{extractbench.MetricQueueTime, extractbench.MetricTTFT, extractbench.MetricE2E}},
		{file: "tgi.txt", kind: "tgi", dialect: "tgi", running: fp(8), waiting: fp(2),
			queueSum: fp(0.912), queueCount: fp(96),
			histograms: []string{extractbench.MetricQueueTime, extractbench.MetricE2E}},
		{file: "llamacpp.txt", kind: "llamacpp", dialect: "llamacpp", running: fp(4), waiting: fp(2), kv: fp(0.271118), tokens: fp(2221),
			kvSource: "llamacpp:kv_cache_usage_ratio"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".txt"), func(t *testing.T) {
			page := readFixture(t, tt.file)
			sc, err := parseMetrics(strings.NewReader(page), nil)
			if err != nil {
				t.Fatal(err)
			}
			checkScrape(t, sc, tt)
			for _, f := range []*family.Family{nil, family.ByKind(tt.kind)} {
				checkSampled(t, page, f, sc, tt)
			}
		})
	}
}

// checkScrape compares one parsed scrape with the case's figures.
func checkScrape(t *testing.T, sc scrape, tt familyCase) {
	t.Helper()
	if sc.family != tt.dialect {
		t.Errorf("dialect = %q, want %q", sc.family, tt.dialect)
	}
	value := func(name string) *float64 {
		if v, ok := sc.values[name]; ok {
			return &v
		}
		return nil
	}
	checks := []struct {
		name      string
		got, want *float64
	}{
		{"running", value(extractbench.MetricRunning), tt.running},
		{"waiting", value(extractbench.MetricWaiting), tt.waiting},
		{"kv usage", value(extractbench.MetricKVUsage), tt.kv},
		{"kv tokens", value(extractbench.MetricKVTokens), tt.tokens},
		{"preemptions", value(extractbench.MetricPreemptions), tt.preemptions},
	}
	var queueSum, queueCount *float64
	if h, ok := sc.histograms[extractbench.MetricQueueTime]; ok {
		queueSum, queueCount = &h.Sum, &h.Count
	}
	checks = append(checks, struct {
		name      string
		got, want *float64
	}{"queue sum", queueSum, tt.queueSum}, struct {
		name      string
		got, want *float64
	}{"queue count", queueCount, tt.queueCount})
	for _, c := range checks {
		if !sameFloat(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, deref(c.got), deref(c.want))
		}
	}
	if got := sc.sources[extractbench.MetricKVUsage]; got != tt.kvSource {
		t.Errorf("KV usage read from %q, want %q", got, tt.kvSource)
	}
	if got := slices.Sorted(maps.Keys(sc.histograms)); !slices.Equal(got, slices.Sorted(slices.Values(tt.histograms))) {
		t.Errorf("histograms %v, want %v", got, tt.histograms)
	}
}

// checkSampled samples page three times through a Sampler told the
// engine's family f (nil: unknown) and checks one sample per canonical
// metric per scrape, the peaks, and no growth between identical pages.
func checkSampled(t *testing.T, page string, f *family.Family, sc scrape, tt familyCase) {
	t.Helper()
	srv, _ := sequenceServer(t, page)
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{Family: f, MetricsURL: srv.URL, Interval: time.Hour}, srv.Client())
	s.scrapeOnce(pipelinetest.Context(t))
	tel := s.Stop()
	if tel.Scrapes != 3 || tel.Family != tt.dialect {
		t.Fatalf("family %s: Scrapes, Family = %d, %q, want 3, %q", f.Label(), tel.Scrapes, tel.Family, tt.dialect)
	}
	perMetric := map[string]int{}
	for _, smp := range tel.Samples {
		perMetric[smp.Metric]++
	}
	for name, n := range perMetric {
		if _, ok := sc.values[name]; !ok || n != tel.Scrapes {
			t.Errorf("%d samples of %s in %d scrapes, want one per scrape of a canonical metric the page carries", n, name, tel.Scrapes)
		}
	}
	if len(perMetric) != len(sc.values) {
		t.Errorf("sampled %v, want every one of %v", perMetric, sc.values)
	}
	if !sameFloat(tel.MaxRunning, tt.running) || !sameFloat(tel.PeakKVUsage, tt.kv) {
		t.Errorf("MaxRunning, PeakKVUsage = %v, %v, want %v, %v", deref(tel.MaxRunning), deref(tel.PeakKVUsage), deref(tt.running), deref(tt.kv))
	}
	// The same page at both ends: nothing grew during the pass.
	if !sameFloat(tel.PreemptionsDelta, zeroIf(tt.preemptions)) {
		t.Errorf("PreemptionsDelta = %v", deref(tel.PreemptionsDelta))
	}
	if !sameFloat(tel.QueueTimeCountDelta, zeroIf(tt.queueCount)) {
		t.Errorf("QueueTimeCountDelta = %v", deref(tel.QueueTimeCountDelta))
	}
}

// zeroIf is 0 when the figure exists, nil when it does not: its growth
// between two identical scrapes.
func zeroIf(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return fp(0)
}

func sameFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return math.Abs(*a-*b) <= 1e-9*math.Max(1, math.Abs(*b))
}

// TestTelemetry_OneKVSamplePerScrape: vLLM 0.9 and 0.10 print the KV usage
// under its V1 name and under the deprecated V0 one; telemetry stores one
// sample per scrape, read from the V1 name.
func TestTelemetry_OneKVSamplePerScrape(t *testing.T) {
	page := readFixture(t, "vllm_v1.txt")
	if !strings.Contains(page, "\nvllm:gpu_cache_usage_perc{") || !strings.Contains(page, "\nvllm:kv_cache_usage_perc{") {
		t.Fatal("vllm_v1.txt should carry both KV names")
	}
	srv, _ := sequenceServer(t, page)
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Hour}, srv.Client())
	s.scrapeOnce(pipelinetest.Context(t))
	tel := s.Stop()
	if n := countSamples(tel, extractbench.MetricKVUsage); n != tel.Scrapes {
		t.Errorf("%d KV samples in %d scrapes, want one per scrape", n, tel.Scrapes)
	}
	if n := countSamples(tel, "vllm:gpu_cache_usage_perc"); n != 0 {
		t.Errorf("%d samples stored under the deprecated name", n)
	}
}

// TestSampler_SeriesAppearingMidPass: TGI prints a histogram only once it
// has observed something, and SGLang its retraction counter only after the
// first retraction; a series the first scrape lacks counts from zero.
func TestSampler_SeriesAppearingMidPass(t *testing.T) {
	fresh := "# HELP tgi_queue_size Current queue size\n# TYPE tgi_queue_size gauge\ntgi_queue_size 0\n"
	srv, _ := sequenceServer(t, fresh, readFixture(t, "tgi.txt"))
	tel := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv.URL, Interval: time.Hour}, srv.Client()).Stop()
	if !eqPtr(tel.QueueTimeCountDelta, 96) || !sameFloat(tel.QueueTimeSumDelta, fp(0.912)) || !eqPtr(tel.E2ECountDelta, 96) {
		t.Errorf("QueueTimeCountDelta, QueueTimeSumDelta, E2ECountDelta = %v, %v, %v, want 96, 0.912, 96",
			deref(tel.QueueTimeCountDelta), deref(tel.QueueTimeSumDelta), deref(tel.E2ECountDelta))
	}
	if tel.PreemptionsDelta != nil || tel.TTFTCountDelta != nil {
		t.Errorf("PreemptionsDelta, TTFTCountDelta = %v, %v, want nil (TGI exposes neither)", deref(tel.PreemptionsDelta), deref(tel.TTFTCountDelta))
	}
	if got := tel.Sources[extractbench.MetricQueueTime]; got != "tgi_request_queue_duration" {
		t.Errorf("queue time read from %q", got)
	}
}

// TestMetricsFold checks how label sets fold: data-parallel ranks add up,
// copies of one scheduler do not, a priority breakdown next to its
// aggregate is not counted twice, and non-finite values are dropped.
func TestMetricsFold(t *testing.T) {
	tests := []struct {
		name, page string
		metric     string
		want       *float64
	}{
		{"sglang dp ranks add up", `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{dp_rank="0",engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 5.0
sglang:num_running_reqs{dp_rank="1",engine_type="unified",model_name="m",pp_rank="0",tp_rank="4"} 7.0
`, extractbench.MetricRunning, fp(12)},
		{"vllm data-parallel engines add up, KV takes the fullest", `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 4.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.5
`, extractbench.MetricRunning, fp(7)},
		{"priority aggregate is read alone", `# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name="m",priority="",tp_rank="0"} 9.0
sglang:num_queue_reqs{model_name="m",priority="0",tp_rank="0"} 4.0
sglang:num_queue_reqs{model_name="m",priority="1",tp_rank="0"} 5.0
`, extractbench.MetricWaiting, fp(9)},
		{"priority breakdown without aggregate adds up", `# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name="m",priority="0"} 4.0
sglang:num_queue_reqs{model_name="m",priority="1"} 5.0
`, extractbench.MetricWaiting, fp(9)},
		{"NaN and Inf are not values", `# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0"} NaN
vllm:kv_cache_usage_perc{engine="1"} +Inf
`, extractbench.MetricKVUsage, nil},
		{"another engine's names are ignored once a family is detected", `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m"} 2.0
# TYPE tgi_batch_current_size gauge
tgi_batch_current_size 50
`, extractbench.MetricRunning, fp(2)},
		{"llama.cpp after the KV gauges were removed", `# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 1
# HELP llamacpp:requests_deferred Number of requests deferred.
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 0
`, extractbench.MetricKVUsage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := parseMetrics(strings.NewReader(tt.page), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got *float64
			if v, ok := sc.values[tt.metric]; ok {
				got = &v
			}
			if !sameFloat(got, tt.want) {
				t.Errorf("%s = %v, want %v", tt.metric, deref(got), deref(tt.want))
			}
		})
	}
}

// FuzzParseMetrics: any input either fails to parse or yields finite,
// non-negative canonical figures, each read from one of its family's names.
func FuzzParseMetrics(f *testing.F) {
	for _, name := range []string{"vllm_v1.txt", "vllm_v0.txt", "sglang.txt", "tgi.txt", "llamacpp.txt"} {
		f.Add(readFixture(f, name))
	}
	f.Add(vllmMetrics(1, 2, 0.5, 3, 4, 5))
	f.Add("# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine=\"0\"} NaN\n")
	f.Add("sglang:num_running_reqs{priority=\"\"} 1\nsglang:num_running_reqs{priority=\"2\"} 1\n")
	f.Add("# TYPE tgi_request_queue_duration histogram\ntgi_request_queue_duration_bucket{le=\"+Inf\"} 2\ntgi_request_queue_duration_sum 1\ntgi_request_queue_duration_count 2\n")
	f.Fuzz(func(t *testing.T, text string) {
		sc, err := parseMetrics(strings.NewReader(text), nil)
		if err != nil {
			return
		}
		known := map[string]bool{}
		for _, p := range family.Dialects(nil) {
			for _, names := range p.Names {
				for _, n := range names {
					known[n] = true
				}
			}
		}
		for _, names := range family.AnyDialect {
			for _, n := range names {
				known[n] = true
			}
		}
		for name, v := range sc.values {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("%s = %v", name, v)
			}
			if _, refused := sc.refused[name]; refused {
				t.Errorf("%s both kept and refused", name)
			}
			if !known[sc.sources[name]] {
				t.Errorf("%s read from unknown name %q", name, sc.sources[name])
			}
		}
		for name, h := range sc.histograms {
			if math.IsNaN(h.Sum) || math.IsInf(h.Sum, 0) || h.Count < 0 {
				t.Errorf("%s = %+v", name, h)
			}
			if !known[sc.sources[name]] {
				t.Errorf("%s read from unknown name %q", name, sc.sources[name])
			}
		}
		if len(sc.sources) != len(sc.values)+len(sc.histograms) {
			t.Errorf("sources %v for values %v and histograms %v", sc.sources, sc.values, sc.histograms)
		}
	})
}
