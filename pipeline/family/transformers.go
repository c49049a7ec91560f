package family

import (
	"encoding/json"
	"strings"
)

// Transformers is engines/transformers, our reference server on GPUs
// (transformers' continuous batching).
var Transformers = register(&Family{
	Kind: "transformers",
	Doc:  "extractbench's transformers server",
	Probes: []Probe{{Path: "/version", Match: func(a map[string]json.RawMessage) bool {
		return strings.HasPrefix(stringOf(a["version"]), "transformers-")
	}}},
	VersionPath: "/version",
	identify:    fieldsIdentity("/version", []string{"version"}, "served_model", "engine", "shape", "weights_bytes", "attn_kernel"),
	// It prints vLLM V1's names, and the torch peaks after POST /reset_peaks.
	Telemetry: prometheusAt(vllmMetrics, "KV-cache tokens in use"),
	Reset:     Reset{Note: "the transformers server has no prompt-cache reset endpoint"},
	Start:     "engines/transformers/server.py",
})
