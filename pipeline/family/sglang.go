package family

import (
	"encoding/json"
	"regexp"

	"github.com/extractbench/extractbench"
)

// SGLang is SGLang's server (python -m sglang.launch_server).
var SGLang = register(&Family{
	Kind:    "sglang",
	Doc:     "SGLang",
	OwnedBy: []string{"sglang"},
	Probes: []Probe{{Path: "/get_server_info", Match: func(a map[string]json.RawMessage) bool {
		return has(a, "version") && has(a, "model_path")
	}}},
	// It answers vLLM's /version too; /get_server_info adds the arguments.
	VersionPath: "/get_server_info",
	identify:    fieldsIdentity("/get_server_info", []string{"version"}, "model_path", "tp_size", "dp_size", "context_length", "mem_fraction_static"),
	Quirks: Quirks{
		// With --enable-cache-report.
		CachedTokens: []string{"usage.prompt_tokens_details.cached_tokens"},
	},
	Telemetry: prometheusAt(&Prometheus{
		Dialect: "sglang", // started with --enable-metrics
		Names: map[string][]string{
			extractbench.MetricRunning:  {"sglang:num_running_reqs"},
			extractbench.MetricWaiting:  {"sglang:num_queue_reqs"},
			extractbench.MetricKVUsage:  {"sglang:token_usage"},
			extractbench.MetricKVTokens: {"sglang:num_used_tokens"},
			// Retraction is SGLang's preemption: a decoding request evicted
			// back to the queue when the KV pool runs out. The older
			// sglang:num_retracted_reqs gauge is reset at every log interval,
			// so it cannot be differenced and is not read.
			extractbench.MetricPreemptions: {"sglang:num_retracted_requests_total"},
			extractbench.MetricQueueTime:   {"sglang:queue_time_seconds"},
			extractbench.MetricTTFT:        {"sglang:time_to_first_token_seconds"},
			extractbench.MetricE2E:         {"sglang:e2e_request_latency_seconds"},
		},
	}, "nothing: /metrics only with --enable-metrics"),
	Reset: Reset{
		// The radix cache; refused while requests run.
		Do:   postReset("/flush_cache"),
		Note: "POST /flush_cache is refused while requests run",
	},
	MemoryEvidence: []*regexp.Regexp{
		// The KV pool found no room at start-up (--mem-fraction-static).
		regexp.MustCompile(`(?i)not enough memory`),
	},
})
