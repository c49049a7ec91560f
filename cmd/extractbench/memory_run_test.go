package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/results/plan/plantest"
)

// TestMemory_ModelFromTheRun is issue 40 item 11: `memory RUN_DIR` without
// -model sizes the run's own model, from its manifest (a preset of its
// name, else the config.json beside its tokenizer.json), and refuses a run
// whose model's shape it cannot find, naming the flag to pass. It sized
// the default preset, Llama-3.1-8B, for a run of a 15M model: "+45,719.94%".
func TestMemory_ModelFromTheRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		model     string
		config    bool     // a config.json lies beside the run's tokenizer.json
		args      []string // beside the directory
		code      int
		want, not string
	}{
		{name: "a preset's name", model: "meta-llama/Llama-3.1-8B-Instruct", code: exitOK, want: "as Llama-3.1-8B"},
		{name: "config.json beside the tokenizer", model: "extract-llama-15m", config: true, code: exitOK, want: "extract-llama-15m as ", not: "Llama-3.1-8B"},
		{name: "shape unknown", model: "extract-llama-15m", code: exitUsage, want: "pass -model with its config.json"},
		{name: "shape unknown, -model given", model: "extract-llama-15m", args: []string{"-model", "Llama-3.1-8B"}, code: exitOK, want: "as Llama-3.1-8B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			proto := filepath.Join(root, "protocols", "p.yaml")
			if tc.config {
				b, err := os.ReadFile(filepath.Join("..", "..", "sizing", "testdata", "gguf", "h512-config.json"))
				if err == nil {
					err = os.MkdirAll(filepath.Join(root, "model"), 0o755)
				}
				if err == nil {
					err = os.WriteFile(filepath.Join(root, "model", "config.json"), b, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			run := sizingFixture()
			m := run.Manifest
			engine := map[string]any{"url": "http://127.0.0.1:8000", "model": tc.model, "tokenizer": "../model/tokenizer.json", "params": 17517568}
			m["model"], m["engine"], m["protocol_source"] = tc.model, engine, proto
			m["variants"] = []any{map[string]any{"name": "bf16", "engine": engine}, map[string]any{"name": "int4", "engine": engine}}
			dir := filepath.Join(root, "out")
			plantest.Write(t, dir, run)
			code, stdout, stderr := runCLI(t, append(append([]string{"memory"}, tc.args...), dir)...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) || (tc.not != "" && strings.Contains(stdout, tc.not)) {
				t.Errorf("exit %d, want %d saying %q (not %q):\n%s%s", code, tc.code, tc.want, tc.not, stdout, stderr)
			}
		})
	}
}
