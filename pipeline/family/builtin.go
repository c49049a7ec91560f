package family

import (
	"encoding/json"
	"strings"
)

// Builtin is extractbench's simulated engine (engines/builtin), reached by
// URL (extractbench engine serve) or in-process (url: builtin).
var Builtin = register(&Family{
	Kind:        "builtin",
	Doc:         "the built-in simulated engine",
	Probes:      []Probe{{Path: "/version", Match: SimulatedAnswer}},
	VersionPath: "/version",
	identify:    fieldsIdentity("/version", []string{"version"}, "model", "engine", "simulated", "gpu"),
	// It speaks vLLM V1's names, and simulates the torch peaks.
	Telemetry: prometheusAt(vllmMetrics, "KV-cache tokens in use"),
	Reset: Reset{
		// It keeps no prompt cache; its endpoint says so, and the reset is
		// exercised end to end.
		Do: postReset(BuiltinCacheResetPath),
	},
	Start: "engines/builtin/starter",
})

// BuiltinCacheResetPath is the built-in engine's reset endpoint
// (engines/builtin's CacheResetPath).
const BuiltinCacheResetPath = "/reset_prompt_cache"

// builtinVersionPrefix starts the version the built-in engine reports,
// earlier builds included ("extractbench-builtin/1"), which did not say
// "simulated" (engines/builtin's Name).
const builtinVersionPrefix = "extractbench-builtin"

// SimulatedAnswer reports whether a /version answer is the built-in
// engine's: it says "simulated": true, or its version starts with the
// engine's name. A run records an engine as simulated because it says so.
func SimulatedAnswer(a map[string]json.RawMessage) bool {
	return string(a["simulated"]) == "true" || strings.HasPrefix(stringOf(a["version"]), builtinVersionPrefix)
}
