package family

import (
	"encoding/json"
	"regexp"

	"github.com/extractbench/extractbench"
)

// TGI is Hugging Face's text-generation-inference.
var TGI = register(&Family{
	Kind: "tgi",
	Doc:  "TGI",
	// Its /v1/models names no owner of its own.
	Probes: []Probe{{Path: "/info", Match: func(a map[string]json.RawMessage) bool {
		return has(a, "model_id") && has(a, "max_total_tokens")
	}}},
	VersionPath: "/info",
	identify:    fieldsIdentity("/info", []string{"version"}, "model_id", "model_sha", "model_dtype", "sha", "max_total_tokens"),
	Quirks: Quirks{
		Errors: `{"error": "...", "error_type": "..."}, in a stream as its own event (router/src/lib.rs ErrorResponse)`,
	},
	Telemetry: prometheusAt(&Prometheus{
		Dialect: "tgi",
		Names: map[string][]string{
			extractbench.MetricRunning:   {"tgi_batch_current_size"},
			extractbench.MetricWaiting:   {"tgi_queue_size"},
			extractbench.MetricQueueTime: {"tgi_request_queue_duration"}, // seconds (as_secs_f64), like vLLM's
			extractbench.MetricE2E:       {"tgi_request_duration"},       // validation + queue + inference, seconds
		},
	}, "KV-cache usage, preemptions, time to first token"),
	Reset: Reset{Note: "TGI has no endpoint that empties its prefix cache"},
	MemoryEvidence: []*regexp.Regexp{
		// Warm-up: "Not enough memory to handle N prefill tokens".
		regexp.MustCompile(`(?i)not enough memory`),
	},
})
