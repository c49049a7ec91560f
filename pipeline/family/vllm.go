package family

import (
	"regexp"

	"github.com/extractbench/extractbench"
)

// VLLM is vLLM's OpenAI-compatible server (vllm serve).
var VLLM = register(&Family{
	Kind:    "vllm",
	Doc:     "vLLM",
	OwnedBy: []string{"vllm"}, // /v1/models, vllm/entrypoints/openai/protocol.py ModelCard
	// No probe: /version's {"version": ...} is answered by SGLang too.
	VersionPath: "/version",
	identify:    fieldsIdentity("/version", []string{"version"}, ""),
	Quirks: Quirks{
		// Only with --enable-prompt-tokens-details; else absent.
		CachedTokens: []string{"usage.prompt_tokens_details.cached_tokens"},
	},
	Telemetry: prometheusAt(vllmMetrics, "KV-cache tokens in use (vLLM reports the fraction only)"),
	Reset: Reset{
		// The automatic prefix cache; recent versions serve the endpoint
		// only with VLLM_SERVER_DEV_MODE=1: a 404 is a failed reset.
		Do:   postReset("/reset_prefix_cache"),
		Note: "POST /reset_prefix_cache needs VLLM_SERVER_DEV_MODE=1 in recent versions",
	},
	MemoryEvidence: []*regexp.Regexp{
		// Start-up: the weights leave no room for one request's KV cache.
		regexp.MustCompile(`No available memory for the cache blocks`),
		regexp.MustCompile(`larger than the available KV cache memory`),
	},
})

// vllmMetrics are vLLM's names, which the built-in and transformers
// engines print too. The V0 generation is told apart by vllmGeneration.
var vllmMetrics = &Prometheus{
	Dialect: "vllm-v1", // vLLM's V1 engine (0.8 on), and servers that speak its names
	Names: map[string][]string{
		extractbench.MetricRunning: {"vllm:num_requests_running"},
		extractbench.MetricWaiting: {"vllm:num_requests_waiting"},
		// 0.9-0.10 print the KV usage under both names.
		extractbench.MetricKVUsage:     {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
		extractbench.MetricPreemptions: {"vllm:num_preemptions_total"},
		extractbench.MetricQueueTime:   {"vllm:request_queue_time_seconds"},
		extractbench.MetricTTFT:        {"vllm:time_to_first_token_seconds"},
		extractbench.MetricE2E:         {"vllm:e2e_request_latency_seconds"},
	},
	Generation: vllmGeneration,
}

// vllmGeneration tells vLLM's engines apart: V1 prints
// vllm:kv_cache_usage_perc (0.9 on) or labels its series by engine (data
// parallel rank); V0 (the default before 0.8) does neither.
func vllmGeneration(s Series) string {
	if s.Has("vllm:kv_cache_usage_perc") || s.Labelled("vllm:", "engine") {
		return "vllm-v1"
	}
	return "vllm-v0"
}
