package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/sizing"
	"github.com/extractbench/extractbench/sizing/gguftest"
)

// TestMemory_GGUFFile: `memory -model FILE.gguf` reads the file's shape
// and scheme, puts the calculator's tensors beside the file's and sizes
// the weights as that scheme. The files are the headers of the GGUFs
// llama-quantize made of the retrain's shape (sizing/testdata/gguf: each
// tensor's type and bytes as gguf-py read them), so Q4_K_M's Q6_K tensors,
// Q4_0's Q6_K embedding and Q8_0's 34-byte blocks must all come out as
// the file's bytes; checked as another scheme, the same file differs.
func TestMemory_GGUFFile(t *testing.T) {
	dir := t.TempDir()
	const shape = "../../sizing/testdata/gguf/h512"
	m, err := sizing.LoadHFConfig(shape + "-config.json")
	if err != nil {
		t.Fatal(err)
	}
	type out struct {
		GGUF     sizing.GGUFCheck `json:"gguf"`
		Estimate sizing.Estimate  `json:"estimate"`
	}
	memory := func(args ...string) out {
		t.Helper()
		code, stdout, stderr := runCLI(t, append([]string{"memory", "-json"}, args...)...)
		if code != exitOK {
			t.Fatalf("memory %v: exit %d: %s", args, code, stderr)
		}
		var o out
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatalf("memory -json: %v\n%s", err, stdout)
		}
		return o
	}
	for _, scheme := range []string{"q4_k_m", "q4_0", "q8_0", "q6_k", "bf16"} {
		tensors, err := gguftest.ReadTable(shape + "-" + scheme + ".tsv")
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, ts := range tensors {
			want += ts.Bytes
		}
		path := filepath.Join(dir, scheme+".gguf")
		kvs := gguftest.Llama("extract-llama-15m", m.HiddenSize, m.Layers, m.Heads, m.KVHeads, m.HeadDim, m.IntermediateSize, m.VocabSize, m.MaxContext, scheme)
		if err := gguftest.Write(path, kvs, tensors); err != nil {
			t.Fatal(err)
		}
		o := memory("-model", path)
		if o.GGUF.Scheme != scheme || o.GGUF.FileTensorBytes != want || o.GGUF.PredictedBytes != want || len(o.GGUF.Differences) != 0 {
			t.Errorf("%s: checked as %s: calculator %d, file %d, gguf-py %d, differences %v", scheme, o.GGUF.Scheme,
				o.GGUF.PredictedBytes, o.GGUF.FileTensorBytes, want, o.GGUF.Differences)
		}
		if o.Estimate.GGUF != scheme || o.Estimate.WeightBytes != want || o.Estimate.Shape.HiddenSize != 512 {
			t.Errorf("%s: estimate weights %d as %q (hidden %d), want %d", scheme, o.Estimate.WeightBytes, o.Estimate.GGUF, o.Estimate.Shape.HiddenSize, want)
		}
		if scheme == "q4_k_m" {
			other := memory("-model", path, "-gguf", "q4_0")
			if len(other.GGUF.Differences) == 0 || other.Estimate.WeightBytes == want {
				t.Errorf("q4_k_m file sized as q4_0: %d differences, weights %d (the file's %d)", len(other.GGUF.Differences), other.Estimate.WeightBytes, want)
			}
			code, stdout, stderr := runCLI(t, "memory", "-model", path, "-gpus", "H200")
			if code != exitOK || !strings.Contains(stdout, "the calculator's tensors are the file's") || !strings.Contains(stdout, "as GGUF q4_k_m") {
				t.Errorf("memory -model %s: exit %d\n%s%s", path, code, stdout, stderr)
			}
		}
	}
}
