package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// The numbers modes report figures that cannot be true, where a run reads
// numbers from the engine: the usage of a stream, the values of /metrics.
const (
	// NumbersUsageNegative answers well with a usage of -5 prompt and -5
	// completion tokens.
	NumbersUsageNegative Mode = "numbers-usage-negative"
	// NumbersUsageHuge answers well with a usage of 2^63−1 prompt and
	// completion tokens.
	NumbersUsageHuge Mode = "numbers-usage-huge"
	// NumbersUsageFloat answers well with a usage of 1e30 prompt and 3.5
	// completion tokens: numbers JSON allows, counts no engine can have.
	NumbersUsageFloat Mode = "numbers-usage-float"
	// NumbersMetricsHuge answers well; its /metrics gives 1e300 for every
	// gauge, counter and histogram sum a run reads.
	NumbersMetricsHuge Mode = "numbers-metrics-huge"
	// NumbersMetricsNegative answers well; its /metrics figures are negative.
	NumbersMetricsNegative Mode = "numbers-metrics-negative"
	// NumbersMetricsNaN answers well; its /metrics figures are NaN.
	NumbersMetricsNaN Mode = "numbers-metrics-nan"
	// Numbers429AboveN answers a request with 429 at once while more than
	// Options.N (default 2) are in flight, else well after NumbersServiceTime:
	// its capacity is N / NumbersServiceTime successes a second (100/s at
	// the defaults), however fast it refuses the rest.
	Numbers429AboveN Mode = "numbers-429-above-n"
)

// NumbersServiceTime is how long Numbers429AboveN takes over a request it
// serves.
const NumbersServiceTime = 20 * time.Millisecond

func init() {
	register(NumbersUsageNegative, usageMode(-5))
	register(NumbersUsageHuge, usageMode(1<<63-1))
	register(NumbersUsageFloat, usageModeOf(1e30, 3.5))
	register(NumbersMetricsHuge, metricsMode("1e300"))
	register(NumbersMetricsNegative, metricsMode("-7"))
	register(NumbersMetricsNaN, metricsMode("NaN"))
	register(Numbers429AboveN, func(s *Server, o Options) http.Handler {
		limit := int64(o.N)
		if limit <= 0 {
			limit = 2
		}
		var inFlight atomic.Int64
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			defer inFlight.Add(-1)
			if inFlight.Add(1) > limit {
				WriteJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{"message": "too many requests in flight", "code": 429}})
				return
			}
			select {
			case <-time.After(NumbersServiceTime):
			case <-r.Context().Done():
				return
			}
			StreamAnswer(w, Answer)
		})
	})
}

// usageMode streams Answer with both usage counts n (and their sum, as
// an int64 would wrap it, for the total).
func usageMode(n int64) builder { return usageModeOf(n, n) }

// usageModeOf answers well with a usage of prompt and completion tokens,
// written as JSON numbers however they are typed.
func usageModeOf(prompt, completion any) builder {
	return func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			fmt.Fprint(w, Chunk(Answer))
			b, _ := json.Marshal(map[string]any{
				"id": "chatcmpl-hostile", "object": "chat.completion.chunk", "created": 1, "model": Model,
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}},
				"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion},
			})
			fmt.Fprint(w, "data: "+string(b)+"\n\n")
			fmt.Fprint(w, Done)
		})
	}
}

// metricsMode answers well, with a vLLM /metrics page whose every figure
// is value.
func metricsMode(value string) builder {
	return func(s *Server, o Options) http.Handler {
		engine := Base(s, o, func(w http.ResponseWriter, r *http.Request) { StreamAnswer(w, Answer) })
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/metrics" {
				engine.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprintf(w, metricsPage, value)
		})
	}
}

// metricsPage is a vLLM /metrics page with every figure a run reads as %[1]s.
const metricsPage = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="hostile"} %[1]s
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="hostile"} %[1]s
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="hostile"} %[1]s
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{model_name="hostile"} %[1]s
# TYPE torch_cuda_max_memory_allocated_bytes gauge
torch_cuda_max_memory_allocated_bytes{device="0"} %[1]s
# TYPE torch_cuda_max_memory_reserved_bytes gauge
torch_cuda_max_memory_reserved_bytes{device="0"} %[1]s
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{model_name="hostile",le="+Inf"} 1
vllm:request_queue_time_seconds_sum{model_name="hostile"} %[1]s
vllm:request_queue_time_seconds_count{model_name="hostile"} 1
`
