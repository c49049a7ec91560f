package sizing

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/numfmt"
)

func mustPreset(t *testing.T, name string) Model {
	t.Helper()
	m, ok := Preset(name)
	if !ok {
		t.Fatalf("preset %q not found", name)
	}
	return m
}

// TestPresetParams checks the shape arithmetic against the parameter counts
// the model cards publish (Hugging Face safetensors totals).
func TestPresetParams(t *testing.T) {
	tests := []struct {
		name string
		want float64
	}{
		{"Llama-3.2-1B", 1.23581e9},
		{"Llama-3.2-3B", 3.21275e9},
		{"Llama-3.1-8B", 8.03026e9},
		{"Qwen2.5-7B", 7.61562e9},
		{"Mistral-7B", 7.24802e9},
		{"Qwen2.5-32B", 32.7635e9},
		{"Llama-3.1-70B", 70.5537e9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := float64(mustPreset(t, tt.name).Params().Total())
			if math.Abs(got-tt.want)/tt.want > 0.001 {
				t.Errorf("params: got %.6g, want %.6g", got, tt.want)
			}
		})
	}
}

// TestCalculateLlama8B checks every figure against arithmetic done by hand:
//
//	per layer: q,o 2×4096×4096 + k,v 2×4096×1024 = 41,943,040; MLP 3×4096×14,336 = 176,160,768
//	linear = 32 × 218,103,808 = 6,979,321,856
//	other  = 32 × 2×4096 (norms) + 2 × 128,256×4096 (embedding, head) + 4096 = 1,050,939,392
//	params = 8,030,261,248; bf16 weights = 16,060,522,496 B = 14.96 GiB
//	KV/token = 2×32×8×128×2 = 131,072 B; × 8,192 tokens = 1,073,741,824 B = 1 GiB
//	activations = 8,192 × (2×4096 + 4096 + 2×1024 + 2×14,336) × 2 = 704,643,072; logits 128,256×4 = 513,024 per sequence
//	total at 1 = 16,060,522,496 + 1,073,741,824 + 704,643,072 + 513,024 + 1,073,741,824 = 18,913,162,240
//	H100 80 GB: usable 72e9; with 10% margin (72e9/1.1 − 17,838,907,392) / 1,074,254,848 = 44.3 → 44;
//	  without (72e9 − 17,838,907,392) / 1,074,254,848 = 50.4 → 50
//	L4 24 GB: usable 21.6e9 → 1 with margin, 3 without
func TestCalculateLlama8B(t *testing.T) {
	e, err := Calculate(Inputs{Model: mustPreset(t, "Llama-3.1-8B"), ContextTokens: 8192, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	ints := []struct {
		name      string
		got, want int64
	}{
		{"params", e.Params, 8_030_261_248},
		{"quantised params", e.QuantisedParams, 6_979_321_856},
		{"weights", e.WeightBytes, 16_060_522_496},
		{"kv per token", e.KVBytesPerToken, 131_072},
		{"kv per sequence", e.KVBytesPerSeq, 1 << 30},
		{"activations", e.ActivationBytes, 704_643_072 + 513_024},
		{"total", e.TotalBytes, 18_913_162_240},
		{"total with margin", e.TotalWithMarginBytes, 20_804_478_464},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	if got := numfmt.GiBString(e.WeightBytes); got != "14.96 GiB" {
		t.Errorf("weights printed: got %s, want 14.96 GiB", got)
	}
	fits := []struct {
		gpu               string
		fits              bool
		maxC, maxNoMargin int
	}{
		{"L4", true, 1, 3},
		{"RTX 4090", true, 1, 3},
		{"L40S", true, 19, 23},
		{"A100 80GB", true, 44, 50},
		{"H100 SXM", true, 44, 50},
		{"H200", true, 90, 101},
	}
	for _, c := range fits {
		f, ok := e.FitFor(c.gpu)
		if !ok {
			t.Fatalf("no fit for %s", c.gpu)
		}
		if f.Fits != c.fits || f.MaxConcurrency != c.maxC || f.MaxConcurrencyNoMargin != c.maxNoMargin {
			t.Errorf("%s: got fits %v max %d (no margin %d), want %v %d (%d)",
				c.gpu, f.Fits, f.MaxConcurrency, f.MaxConcurrencyNoMargin, c.fits, c.maxC, c.maxNoMargin)
		}
	}
	if h, _ := e.FitFor("H100 SXM"); math.Abs(h.DecodeCeilingTokS-3350e9/16_060_522_496) > 1e-9 {
		t.Errorf("decode ceiling: got %v", h.DecodeCeilingTokS)
	}
}

func TestCalculatePrecisions(t *testing.T) {
	m := mustPreset(t, "Llama-3.1-8B")
	tests := []struct {
		weights, kv     Precision
		group           int
		wantW, wantKVPT int64
	}{
		// linear × 0.5 + 4/128 = 6,979,321,856 × 17/32 = 3,707,764,736; other in 16 bits = 2,101,878,784
		{INT4, BF16, 128, 3_707_764_736 + 2_101_878_784, 131_072},
		// group 64: 0.5 + 4/64 = 0.5625 → 3,925,868,544
		{INT4, FP8, 64, 3_925_868_544 + 2_101_878_784, 65_536},
		{FP8, FP8, 0, 6_979_321_856 + 2_101_878_784, 65_536},
		{INT8, BF16, 0, 6_979_321_856 + 2_101_878_784, 131_072},
	}
	for _, tt := range tests {
		t.Run(string(tt.weights)+"/"+string(tt.kv), func(t *testing.T) {
			e, err := Calculate(Inputs{Model: m, Weights: tt.weights, KV: tt.kv, GroupSize: tt.group, ContextTokens: 8192, Concurrency: 4})
			if err != nil {
				t.Fatal(err)
			}
			if e.WeightBytes != tt.wantW || e.KVBytesPerToken != tt.wantKVPT {
				t.Errorf("got weights %d KV/token %d, want %d %d", e.WeightBytes, e.KVBytesPerToken, tt.wantW, tt.wantKVPT)
			}
			if e.KVBytes != 4*8192*tt.wantKVPT {
				t.Errorf("KV for 4 sequences: got %d, want %d", e.KVBytes, 4*8192*tt.wantKVPT)
			}
		})
	}
}

func TestCalculateLlama70BDoesNotFitSmallCards(t *testing.T) {
	e, err := Calculate(Inputs{Model: mustPreset(t, "Llama-3.1-70B"), ContextTokens: 8192, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range e.Fits {
		// 70.55e9 × 2 B = 141 GB of weights: no single card up to the H200
		// holds it in bf16; the B200's usable 162e9 B holds it with 1
		// sequence at the 10% margin: (162e9/1.1 − 141.98e9 − buffers) / 2.68e9 = 1.
		if f.GPU.Name == "B200" {
			if f.Fits || f.MaxConcurrency != 1 {
				t.Errorf("B200: got fits %v max %d, want no fit for 8 and max 1", f.Fits, f.MaxConcurrency)
			}
			continue
		}
		if f.Fits || f.MaxConcurrency != 0 || f.HeadroomBytes >= 0 {
			t.Errorf("%s: got fits %v max %d headroom %d, want no fit", f.GPU.Name, f.Fits, f.MaxConcurrency, f.HeadroomBytes)
		}
	}
}

func TestCalculateErrors(t *testing.T) {
	m := mustPreset(t, "Llama-3.2-1B")
	tests := []struct {
		in   Inputs
		want string // the cause the error names
	}{
		{Inputs{Model: m, ContextTokens: 0, Concurrency: 1}, "context length 0: want a positive number of tokens"},
		{Inputs{Model: m, ContextTokens: 10, Concurrency: 0}, "concurrency 0: want at least 1 sequence"},
		{Inputs{Model: m, ContextTokens: 10, Concurrency: 1, Weights: "int3"}, `weight precision "int3": want bf16, fp16, fp8, int8, int4 or fp4`},
		{Inputs{Model: m, ContextTokens: 10, Concurrency: 1, KV: INT4}, `KV precision "int4": want bf16, fp16 or fp8`},
		{Inputs{Model: m, ContextTokens: 10, Concurrency: 1, Utilisation: 1.5}, "utilisation 1.5: want a share of memory between 0 and 1"},
		{Inputs{Model: Model{Name: "empty"}, ContextTokens: 10, Concurrency: 1}, `model "empty": shape incomplete`},
	}
	for i, tt := range tests {
		if _, err := Calculate(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("case %d: got %v, want an error containing %q", i, err, tt.want)
		}
	}
}

func TestParseHFConfig(t *testing.T) {
	files, err := filepath.Glob("testdata/config/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata configs: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f[:len(f)-len(".json")])
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseHFConfig(data, name)
			if err != nil {
				t.Fatal(err)
			}
			want := mustPreset(t, name)
			if got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseHFConfigRefuses(t *testing.T) {
	tests := map[string]struct{ cfg, want string }{
		"not json":      {`{`, "decode config.json: unexpected end of JSON input"},
		"missing shape": {`{"hidden_size": 4096}`, "config.json: missing or non-positive num_hidden_layers, num_attention_heads, intermediate_size, vocab_size"},
		"moe": {`{"model_type":"mixtral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"intermediate_size":14336,"vocab_size":32000,"num_local_experts":8}`,
			"8 experts but num_experts_per_tok 0"},
		"shared experts": {`{"model_type":"qwen2_moe","hidden_size":2048,"num_hidden_layers":24,"num_attention_heads":16,"intermediate_size":5632,"vocab_size":151936,"num_experts":60,"num_experts_per_tok":4,"shared_expert_intermediate_size":5632}`,
			`model_type "qwen2_moe" is a mixture of experts with shared experts`},
		"bad gqa": {`{"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":5,"intermediate_size":14336,"vocab_size":32000}`,
			"model bad gqa: 32 attention heads are not a multiple of 5 KV heads"},
	}
	for name, tt := range tests {
		if _, err := ParseHFConfig([]byte(tt.cfg), name); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tt.want)
		}
	}
}

func TestFindGPU(t *testing.T) {
	tests := map[string]string{
		"h100":                    "H100 SXM",
		"NVIDIA H100 80GB HBM3":   "H100 SXM",
		"NVIDIA H200":             "H200",
		"NVIDIA A100-SXM4-80GB":   "A100 80GB",
		"NVIDIA L4":               "L4",
		"NVIDIA L40S":             "L40S",
		"NVIDIA GeForce RTX 4090": "RTX 4090",
		"rtx 4090":                "RTX 4090",
	}
	for in, want := range tests {
		got, ok := FindGPU(in)
		if !ok || got.Name != want {
			t.Errorf("FindGPU(%q): got %q %v, want %q", in, got.Name, ok, want)
		}
	}
	if g, ok := FindGPU("Tesla T4"); ok {
		t.Errorf("T4 is not in the catalog, got %s", g.Name)
	}
	g, err := ParseGPU("A10G=24")
	if err != nil || g.Bytes() != 24_000_000_000 {
		t.Errorf("ParseGPU(A10G=24): got %+v %v", g, err)
	}
	if _, err := ParseGPU("A10G=lots"); err == nil || !strings.Contains(err.Error(), `gpu "A10G=lots": want NAME=GB with GB a positive decimal number`) {
		t.Errorf("ParseGPU(A10G=lots): got %v, want an error saying GB must be a positive number", err)
	}
	if _, err := ParseGPU("T4"); err == nil || !strings.Contains(err.Error(), `gpu "T4" is not in the catalog`) || !strings.Contains(err.Error(), "give NAME=GB instead") {
		t.Errorf("ParseGPU(T4): got %v, want an error saying the card is not in the catalog", err)
	}
}

func TestBytesFormat(t *testing.T) {
	tests := map[int64]string{
		16_060_522_496: "14.96 GiB (16,060,522,496 B)",
		131_072:        "128.0 KiB (131,072 B)",
		-3 * GiB:       "-3.00 GiB (-3,221,225,472 B)",
		512:            "512 B (512 B)",
	}
	for in, want := range tests {
		if got := Bytes(in); got != want {
			t.Errorf("Bytes(%d): got %q, want %q", in, got, want)
		}
	}
}

func TestResolveModel(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/config/Qwen2.5-7B.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{dir, filepath.Join(dir, "config.json"), "qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct"} {
		m, err := ResolveModel(in)
		if err != nil || m.Params() != mustPreset(t, "Qwen2.5-7B").Params() {
			t.Errorf("ResolveModel(%q): got %+v %v", in, m, err)
		}
	}
	if _, err := ResolveModel("gpt-5"); err == nil || !strings.Contains(err.Error(), "Llama-3.1-70B") {
		t.Errorf("unknown model: got %v, want the preset list", err)
	}
	// The longest preset name wins: Qwen2.5-32B is not Qwen2.5-3...
	if m, _ := Preset("Qwen/Qwen2.5-32B-Instruct-AWQ"); m.Name != "Qwen2.5-32B" {
		t.Errorf("got %s", m.Name)
	}
}

func FuzzParseHFConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/config/*.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"num_key_value_heads":-3,"head_dim":0,"intermediate_size":1,"vocab_size":1}`))
	f.Add([]byte(`{"hidden_size":1,"intermediate_size":1,"num_attention_heads":10,"num_hidden_layers":1,"vocab_size":1}`)) // head size 0 (issue 17)
	f.Add([]byte(`{"text_config":{"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":10}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseHFConfig(data, "fuzz")
		if err != nil {
			return
		}
		// A config that parses must be one the calculator can size.
		if m.Layers <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || m.Heads%m.KVHeads != 0 {
			t.Fatalf("accepted an unusable shape: %+v", m)
		}
		if _, err := Calculate(Inputs{Model: m, ContextTokens: 16, Concurrency: 1}); err != nil {
			t.Fatalf("parsed config does not calculate: %v", err)
		}
	})
}

func TestInferPrecision(t *testing.T) {
	tests := map[string]Precision{
		"bf16 meta-llama/Llama-3.1-8B-Instruct":              BF16,
		"int4 sim-8b-int4":                                   INT4,
		"hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4": INT4,
		"neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8":         FP8,
		"w8a8 RedHatAI/Llama-3.1-8B-quantized.w8a8":          INT8,
	}
	for in, want := range tests {
		if got := InferPrecision(in); got != want {
			t.Errorf("InferPrecision(%q): got %s, want %s", in, got, want)
		}
	}
}

// TestCalculate_CommittedModel checks the calculator against real weights:
// the trained model in engines/transformers (its config.json, and the
// tensors its safetensors shards hold, read from their headers). Parameters
// and bf16 weight bytes must be exact.
func TestCalculate_CommittedModel(t *testing.T) {
	dir := filepath.Join("..", "engines", "transformers", "model", "extract-llama-15m")
	m, err := LoadHFConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if len(shards) == 0 {
		t.Fatalf("no safetensors shards in %s", dir)
	}
	var params, bytes int64
	for _, path := range shards {
		n, b := safetensorsSizes(t, path)
		params, bytes = params+n, bytes+b
	}
	est, err := Calculate(Inputs{Model: m, Weights: BF16, KV: BF16, ContextTokens: 8192, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calculator %d parameters, %d bytes; shards %d, %d", est.Params, est.ModelWeightBytes, params, bytes)
	if est.Params != params || est.ModelWeightBytes != bytes {
		t.Errorf("calculator: %d parameters, %d weight bytes; the shards hold %d parameters in %d bytes", est.Params, est.ModelWeightBytes, params, bytes)
	}
}

// safetensorsSizes reads a safetensors header (an 8-byte little-endian
// length, then JSON) and returns the parameters and bytes its tensors hold.
func safetensorsSizes(t *testing.T, path string) (params, size int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n uint64
	if err := binary.Read(f, binary.LittleEndian, &n); err != nil || n > 1<<24 {
		t.Fatalf("%s: header length %d (%v)", path, n, err)
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(f, raw); err != nil {
		t.Fatal(err)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw, &header); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	for name, v := range header {
		if name == "__metadata__" {
			continue
		}
		var tensor struct {
			DType   string  `json:"dtype"`
			Shape   []int64 `json:"shape"`
			Offsets []int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(v, &tensor); err != nil || len(tensor.Offsets) != 2 {
			t.Fatalf("%s: tensor %s: %s (%v)", path, name, v, err)
		}
		count := int64(1)
		for _, d := range tensor.Shape {
			count *= d
		}
		params += count
		size += tensor.Offsets[1] - tensor.Offsets[0]
	}
	return params, size
}
