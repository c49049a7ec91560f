package telemetry

import (
	"strings"

	"github.com/extractbench/extractbench"
	dto "github.com/prometheus/client_model/go"
)

// Engine families whose /metrics telemetry reads. Each names the same
// figures its own way; telemetry stores them under the canonical names
// (extractbench.MetricRunning, ...), so one column means one thing whatever the engine.
const (
	familyVLLMV1   = "vllm-v1"  // vLLM's V1 engine (0.8 on), and servers that speak its names
	familyVLLMV0   = "vllm-v0"  // vLLM's V0 engine (the default before 0.8)
	familySGLang   = "sglang"   // SGLang started with --enable-metrics
	familyTGI      = "tgi"      // Hugging Face text-generation-inference
	familyLlamaCpp = "llamacpp" // llama.cpp's llama-server started with --metrics
)

// family is one engine's names for the canonical metrics.
type family struct {
	name string
	// sources maps a canonical metric to the family's names for it, preferred
	// first: the first one a scrape carries is read, the others are ignored,
	// so that a figure is sampled once per scrape whatever aliases the engine
	// prints (vLLM 0.9-0.10 print the KV usage under two names).
	sources map[string][]string
}

// engineFamilies are tried in this order; the first that a scrape carries a
// mapped name of is the scrape's family, and only its names are read.
var engineFamilies = []family{
	{
		name: familyVLLMV1, // the V0 generation is told apart by vllmGeneration
		sources: map[string][]string{
			extractbench.MetricRunning:     {"vllm:num_requests_running"},
			extractbench.MetricWaiting:     {"vllm:num_requests_waiting"},
			extractbench.MetricKVUsage:     {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
			extractbench.MetricPreemptions: {"vllm:num_preemptions_total"},
			extractbench.MetricQueueTime:   {"vllm:request_queue_time_seconds"},
			extractbench.MetricTTFT:        {"vllm:time_to_first_token_seconds"},
			extractbench.MetricE2E:         {"vllm:e2e_request_latency_seconds"},
		},
	},
	{
		name: familySGLang,
		sources: map[string][]string{
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
	},
	{
		name: familyTGI,
		sources: map[string][]string{
			extractbench.MetricRunning:   {"tgi_batch_current_size"},
			extractbench.MetricWaiting:   {"tgi_queue_size"},
			extractbench.MetricQueueTime: {"tgi_request_queue_duration"}, // seconds (as_secs_f64), like vLLM's
			extractbench.MetricE2E:       {"tgi_request_duration"},       // validation + queue + inference, seconds
		},
	},
	{
		name: familyLlamaCpp,
		sources: map[string][]string{
			extractbench.MetricRunning: {"llamacpp:requests_processing"},
			extractbench.MetricWaiting: {"llamacpp:requests_deferred"},
			// Used cells over n_ctx. llama.cpp removed both KV gauges from
			// /metrics in May 2025 (PR 13660): current builds leave KV NULL.
			extractbench.MetricKVUsage:  {"llamacpp:kv_cache_usage_ratio"},
			extractbench.MetricKVTokens: {"llamacpp:kv_cache_tokens"},
		},
	},
}

// torchSources are read whatever the engine family: our transformers engine
// prints them next to vLLM's names.
var torchSources = map[string][]string{
	extractbench.MetricTorchAlloc:   {"torch_cuda_max_memory_allocated_bytes"},
	extractbench.MetricTorchReserve: {"torch_cuda_max_memory_reserved_bytes"},
	extractbench.MetricCaptures:     {extractbench.MetricCaptures},
}

// detectFamily returns the first engine family that fams carries a mapped
// name of, with its label ("vllm-v0" for an old vLLM); nil when none.
func detectFamily(fams map[string]*dto.MetricFamily) (*family, string) {
	for i := range engineFamilies {
		f := &engineFamilies[i]
		for _, names := range f.sources {
			for _, name := range names {
				if present(fams[name]) {
					if f.name == familyVLLMV1 {
						return f, vllmGeneration(fams)
					}
					return f, f.name
				}
			}
		}
	}
	return nil, ""
}

// vllmGeneration tells vLLM's engines apart: V1 prints
// vllm:kv_cache_usage_perc (0.9 on) or labels its series by engine (data
// parallel rank); V0 does neither.
func vllmGeneration(fams map[string]*dto.MetricFamily) string {
	if present(fams["vllm:kv_cache_usage_perc"]) {
		return familyVLLMV1
	}
	for name, mf := range fams {
		if !strings.HasPrefix(name, "vllm:") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "engine" {
					return familyVLLMV1
				}
			}
		}
	}
	return familyVLLMV0
}

func present(mf *dto.MetricFamily) bool { return mf != nil && len(mf.GetMetric()) > 0 }

// firstPresent returns the first of names that fams carries.
func firstPresent(fams map[string]*dto.MetricFamily, names []string) (string, *dto.MetricFamily) {
	for _, name := range names {
		if mf := fams[name]; present(mf) {
			return name, mf
		}
	}
	return "", nil
}
