package sizing

import (
	"encoding/json"
	"strings"

	"github.com/extractbench/extractbench"
)

// VariantPrecision is the weight precision a variant ran with: the
// protocol's engine.weights when set, else the built-in engine's profile,
// else what the variant and model names say (InferPrecision).
func VariantPrecision(vm extractbench.VariantManifest) Precision {
	if vm.Engine.Weights != "" {
		return Precision(vm.Engine.Weights)
	}
	var prof struct {
		Dtype string `json:"dtype"`
	}
	if len(vm.Extra) > 0 && json.Unmarshal(vm.Extra, &prof) == nil && prof.Dtype != "" {
		return Precision(prof.Dtype)
	}
	return InferPrecision(vm.Name + " " + vm.Engine.Model)
}

// InferPrecision reads a weight precision from a variant or model name
// ("bf16", "Llama-3.1-8B-Instruct-AWQ", "w8a8", "FP8-Dynamic"), bf16 when
// the name says nothing.
func InferPrecision(name string) Precision {
	n := strings.ToLower(name)
	switch {
	case containsAny(n, "int4", "awq", "gptq", "4bit", "w4a16", "q4"):
		return INT4
	case containsAny(n, "fp8"):
		return FP8
	case containsAny(n, "int8", "w8a8", "8bit", "q8"):
		return INT8
	}
	return BF16
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
