package telemetry

import (
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestParseMetrics_RefusesImpossibleValues: a value outside its figure's
// domain leaves the figure out of the scrape, noted as refused, never
// folded with the other series.
func TestParseMetrics_RefusesImpossibleValues(t *testing.T) {
	tests := []struct {
		name, page, metric string
		want               *float64 // the figure kept; nil when refused
	}{
		{"huge running", "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1e300\n", extractbench.MetricRunning, nil},
		{"negative waiting", "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting -3\n", extractbench.MetricWaiting, nil},
		{"NaN running", "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running NaN\n", extractbench.MetricRunning, nil},
		{"KV over 1", "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 1.5\n", extractbench.MetricKVUsage, nil},
		{"KV full is possible", "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 1\n", extractbench.MetricKVUsage, fp(1)},
		{"one bad engine spoils the sum", "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 3\nvllm:num_requests_running{engine=\"1\"} -1e300\n", extractbench.MetricRunning, nil},
		{"bytes over 2^53", "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n# TYPE torch_cuda_max_memory_allocated_bytes gauge\ntorch_cuda_max_memory_allocated_bytes 1.8014398509481984e16\n", extractbench.MetricTorchAlloc, nil},
		{"bytes of an H200", "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n# TYPE torch_cuda_max_memory_allocated_bytes gauge\ntorch_cuda_max_memory_allocated_bytes 1.5e11\n", extractbench.MetricTorchAlloc, fp(1.5e11)},
		{"negative preemptions", "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total -7\n", extractbench.MetricPreemptions, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := parseMetrics(strings.NewReader(tt.page), nil)
			if err != nil {
				t.Fatal(err)
			}
			v, kept := sc.values[tt.metric]
			_, refused := sc.refused[tt.metric]
			switch {
			case tt.want == nil && (kept || !refused):
				t.Errorf("%s kept as %v (refused %v), want it refused", tt.metric, v, refused)
			case tt.want != nil && (!kept || v != *tt.want || refused):
				t.Errorf("%s = %v (kept %v, refused %v), want %v", tt.metric, v, kept, refused, *tt.want)
			}
		})
	}
	sc, err := parseMetrics(strings.NewReader("# TYPE vllm:request_queue_time_seconds histogram\n"+
		"vllm:request_queue_time_seconds_bucket{le=\"+Inf\"} 1\nvllm:request_queue_time_seconds_sum 1e300\nvllm:request_queue_time_seconds_count 1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := sc.histograms[extractbench.MetricQueueTime]; ok || sc.refused[extractbench.MetricQueueTime] != 1e300 {
		t.Errorf("queue-time histogram with a sum of 1e300 kept as %+v (refused %v)", h, sc.refused)
	}
}

// TestCounterDelta_RefusedAtStart: a counter refused at the pass's first
// scrape is not counted from zero (its whole life would pass for the
// pass's growth): the delta is unknown.
func TestCounterDelta_RefusedAtStart(t *testing.T) {
	first, err := parseMetrics(strings.NewReader("# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total NaN\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	last, err := parseMetrics(strings.NewReader("# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total 500\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ep := &endpointState{first: &first, last: &last}
	if d := ep.counterDelta(extractbench.MetricPreemptions); d != nil {
		t.Errorf("preemptions delta = %v, want nil", *d)
	}
}
