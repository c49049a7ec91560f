package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/sizing"
)

// TestMemory_EachVariantItsOwnPrecision: `memory DIR` predicts each variant
// with the weight precision it ran (the built-in profile's dtype here, or
// engine.weights), not the -weights default; an explicit -weights wins.
func TestMemory_EachVariantItsOwnPrecision(t *testing.T) {
	dir := t.TempDir()
	proto := writeFile(t, dir, "two.yaml", strings.Replace(`name: two
corpus: CORPUS
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
  - name: int4
    engine: {url: builtin, model: sim-8b-int4, builtin: {time_scale: 0}}
  - name: named
    engine: {url: builtin, model: sim-8b, weights: fp8, builtin: {time_scale: 0}}
`, "CORPUS", smallCorpus(t, dir), 1))
	out := filepath.Join(dir, "out")
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", proto, "-out", out); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	precisions := func(args ...string) map[string]sizing.Precision {
		code, stdout, stderr := runCLI(t, append([]string{"memory", "-json", "-model", "Llama-3.1-8B"}, args...)...)
		if code != exitOK {
			t.Fatalf("memory: exit %d: %s", code, stderr)
		}
		var mc plan.MemoryCheck
		if err := json.Unmarshal([]byte(stdout), &mc); err != nil {
			t.Fatalf("memory -json: %v\n%s", err, stdout)
		}
		got := map[string]sizing.Precision{}
		for _, e := range mc.Estimates {
			got[e.Variant] = e.Estimate.Weights
		}
		return got
	}
	if got := precisions(out); got["bf16"] != sizing.BF16 || got["int4"] != sizing.INT4 || got["named"] != sizing.FP8 {
		t.Errorf("per-variant precisions = %v, want bf16, int4 and fp8", got)
	}
	if got := precisions("-weights", "int8", out); got["bf16"] != sizing.INT8 || got["int4"] != sizing.INT8 {
		t.Errorf("with -weights int8: %v, want int8 for every variant", got)
	}
}
