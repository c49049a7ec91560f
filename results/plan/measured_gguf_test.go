package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/results/plan/plantest"
	"github.com/extractbench/extractbench/sizing"
	"github.com/extractbench/extractbench/sizing/gguftest"
)

// llamaCppServed is what llama.cpp's llama-server said of the committed
// model's GGUFs (pipeline/client/testdata/llamacpp/v1-models-*.json: meta
// ftype and size, the tensor bytes llama.cpp loaded), and the table of
// the same file's tensors (sizing/testdata/gguf).
var llamaCppServed = []struct {
	variant, ftype string
	size           int64
}{
	{"bf16", "BF16", 29435136},
	{"q8_0", "Q8_0", 15649656},
	{"q4_0", "Q4_0", 9358200},
}

// TestCheckMeasured_GGUFWeights: `memory RUN` of a llama.cpp run predicts
// each variant's weights as its served file's GGUF scheme (from the type
// llama.cpp named), with the shape read from the served file itself (its
// /props model_path), and the prediction equals the tensor bytes
// llama.cpp reported loading for BF16, Q8_0 and Q4_0. A wrong block size
// for any of them (Q8_0's 34 bytes a 32-block, Q4_0's 18, Q6_K's 210 for
// Q4_0's tied embedding) moves the prediction off llama.cpp's figure.
func TestCheckMeasured_GGUFWeights(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile("../../sizing/testdata/gguf/h384-config.json")
	if err != nil {
		t.Fatal(err)
	}
	shape, err := sizing.ParseHFConfig(raw, "extract-llama-15m")
	if err != nil {
		t.Fatal(err)
	}
	var variants []extractbench.VariantManifest
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "extract-llama-15m", "", 0, 0.9, 0)
	m["sweep"] = map[string]any{"mode": "concurrency", "levels": []int{1}, "repetitions": 1}
	run := plantest.Run{RunID: "r", Manifest: m}
	for _, s := range llamaCppServed {
		tensors, err := gguftest.ReadTable("../../sizing/testdata/gguf/h384-" + s.variant + ".tsv")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "extract-llama-15m-"+s.variant+".gguf")
		kvs := gguftest.Llama(shape.Name, shape.HiddenSize, shape.Layers, shape.Heads, shape.KVHeads, shape.HeadDim,
			shape.IntermediateSize, shape.VocabSize, shape.MaxContext, s.variant)
		if err := gguftest.Write(path, kvs, tensors); err != nil {
			t.Fatal(err)
		}
		about, _ := json.Marshal(map[string]any{"build_info": "b1-de3ff81", "model_path": path})
		variants = append(variants, extractbench.VariantManifest{Name: s.variant, Engine: extractbench.EngineInfo{
			Kind: "llamacpp", Model: "extract-llama-15m", VersionSource: "/props", About: about,
			File: &extractbench.ModelFile{Format: s.ftype, Bytes: s.size, Params: 14711040}}})
		run.Passes = append(run.Passes, plantest.Pass(s.variant, 1, 1, 30, 27, 10, 100))
	}
	m["variants"] = variants
	out := filepath.Join(dir, "run")
	plantest.Write(t, out, run)
	rd, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := plan.CheckMeasured(rd, sizing.Inputs{ContextTokens: 8192, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(mc.Estimates) != len(llamaCppServed) {
		t.Fatalf("%d estimates, want %d", len(mc.Estimates), len(llamaCppServed))
	}
	for i, s := range llamaCppServed {
		e := mc.Estimates[i]
		if e.Estimate.GGUF != s.variant || e.Estimate.ModelWeightBytes != s.size {
			t.Errorf("%s: calculator weights %d as GGUF %q, llama.cpp loaded %d (%s)", s.variant, e.Estimate.ModelWeightBytes, e.Estimate.GGUF, s.size, s.ftype)
		}
		if e.Estimate.Shape != shape {
			t.Errorf("%s: shape %+v from the served file, config.json %+v", s.variant, e.Estimate.Shape, shape)
		}
		if e.GGUF == nil || e.GGUF.FileTensorBytes != s.size || len(e.GGUF.Differences) != 0 {
			t.Errorf("%s: served file check %+v, want its %d tensor bytes and no difference", s.variant, e.GGUF, s.size)
		}
	}
	var text bytes.Buffer
	if err := mc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"weights as GGUF q4_0: calculator 9,358,200 B, the engine's file (Q4_0) 9,358,200 B (the same)",
		"weights as GGUF q8_0: calculator 15,649,656 B"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("memory text lacks %q:\n%s", want, text.String())
		}
	}
}
