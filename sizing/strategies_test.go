package sizing

import (
	"math"
	"strings"
	"testing"
)

// TestNewPresetParams checks the presets added for sliding windows and
// mixtures of experts against their model cards, within half the card's
// last printed digit (9.24B: ±0.005e9; 12.9B: ±0.05e9), and by hand exactly:
//
//	Mistral-7B-v0.1: 32 × 218,103,808 linear + 32 × 2 × 4096 norms + 2 × 32,000 × 4096 + 4096 = 7,241,732,096 (card: 7.24B)
//	Gemma-2-9B: per layer q,o 2 × 3584 × 4096 + k,v 2 × 3584 × 2048 + MLP 3 × 3584 × 14,336 = 198,180,864;
//	  × 42 = 8,323,596,288; + tied embedding 256,000 × 3584 = 917,504,000; + 4 norms × 3584 × 42 + 3584
//	  = 9,241,705,984 (card: 9.24B)
//	Mixtral-8x7B: per layer attention 41,943,040 + router 4096 × 8 + 8 experts × 3 × 4096 × 14,336
//	  = 1,451,261,952; × 32 + norms 262,144 + 2 × 32,000 × 4096 + 4096 = 46,702,792,704 (card: 46.7B);
//	  active: 2 experts instead of 8 → 12,879,925,248 (card: 12.9B active)
func TestNewPresetParams(t *testing.T) {
	tests := []struct {
		name          string
		total, active int64
		card, cardAct float64
	}{
		{"Mistral-7B-v0.1", 7_241_732_096, 7_241_732_096, 7.24e9, 7.24e9},
		{"Gemma-2-9B", 9_241_705_984, 9_241_705_984, 9.24e9, 9.24e9},
		{"Mixtral-8x7B", 46_702_792_704, 12_879_925_248, 46.7e9, 12.9e9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPreset(t, tt.name).Params()
			if p.Total() != tt.total || p.Active() != tt.active {
				t.Errorf("got total %d active %d, want %d %d", p.Total(), p.Active(), tt.total, tt.active)
			}
			// The model card rounds to three significant digits.
			for _, c := range []struct{ got, card float64 }{{float64(p.Total()), tt.card}, {float64(p.Active()), tt.cardAct}} {
				tol := 0.5 * math.Pow(10, math.Floor(math.Log10(c.card))-2)
				if math.Abs(c.got-c.card) > tol {
					t.Errorf("got %.4g, the model card says %.4g", c.got, c.card)
				}
			}
		})
	}
}

// TestSlidingWindowKV checks KV per sequence on sliding-window layers by hand:
//
//	Gemma-2-9B, bf16: one token on one layer = 2 × 8 KV heads × 256 × 2 B = 8,192 B; 42 layers: 344,064 B/token.
//	  8,192 tokens: 8,192 B × (21 full × 8,192 + 21 sliding × 4,096) = 2,113,929,216 B (1.97 GiB),
//	  against 8,192 × 42 × 8,192 = 2,818,572,288 B if every layer were global.
//	  2,048 tokens (inside the window): 344,064 × 2,048 = 704,643,072 B.
//	  fp8 KV at 8,192 tokens: half, 1,056,964,608 B.
//	Mistral-7B-v0.1, 32,768 tokens, every layer sliding over 4,096:
//	  2 × 8 × 128 × 2 B = 4,096 B × 32 layers × 4,096 = 536,870,912 B (512 MiB) instead of 4 GiB.
func TestSlidingWindowKV(t *testing.T) {
	tests := []struct {
		model   string
		kv      Precision
		context int
		perTok  int64
		perSeq  int64
	}{
		{"Gemma-2-9B", BF16, 8192, 344_064, 2_113_929_216},
		{"Gemma-2-9B", BF16, 2048, 344_064, 704_643_072},
		{"Gemma-2-9B", FP8, 8192, 172_032, 1_056_964_608},
		{"Mistral-7B-v0.1", BF16, 32768, 131_072, 536_870_912},
		{"Mistral-7B", BF16, 32768, 131_072, 4 << 30}, // v0.3: no window
	}
	for _, tt := range tests {
		e, err := Calculate(Inputs{Model: mustPreset(t, tt.model), KV: tt.kv, ContextTokens: tt.context, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		if e.KVBytesPerToken != tt.perTok || e.KVBytesPerSeq != tt.perSeq || e.KVBytes != 2*tt.perSeq {
			t.Errorf("%s %s at %d: got per token %d per sequence %d (2 sequences %d), want %d %d",
				tt.model, tt.kv, tt.context, e.KVBytesPerToken, e.KVBytesPerSeq, e.KVBytes, tt.perTok, tt.perSeq)
		}
	}
}

// TestCacheStaticDynamic: Llama-3.1-8B, 8,192-token context, 4 sequences.
//
//	Dynamic, 2,048 tokens held on average: 131,072 B × 2,048 = 268,435,456 B per sequence, 1 GiB for 4,
//	  nothing at load: after load = weights 16,060,522,496 + overhead 1,073,741,824 = 17,134,264,320 B.
//	Static: every slot reserves 8,192 tokens at load: 1 GiB per sequence, 4 GiB for 4, all of it
//	  after load: 17,134,264,320 + 4,294,967,296 = 21,429,231,616 B.
func TestCacheStaticDynamic(t *testing.T) {
	m := mustPreset(t, "Llama-3.1-8B")
	dyn, err := Calculate(Inputs{Model: m, ContextTokens: 8192, MeanTokens: 2048, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	st, err := Calculate(Inputs{Model: m, ContextTokens: 8192, MeanTokens: 2048, Cache: StaticCache, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want int64
	}{
		{"dynamic per sequence", dyn.KVBytesPerSeq, 268_435_456},
		{"dynamic KV", dyn.KVBytes, 1 << 30},
		{"dynamic at load", dyn.KVAtLoadBytes, 0},
		{"dynamic after load", dyn.AfterLoadBytes(), 17_134_264_320},
		{"static per sequence", st.KVBytesPerSeq, 1 << 30},
		{"static KV", st.KVBytes, 4 << 30},
		{"static at load", st.KVAtLoadBytes, 4 << 30},
		{"static after load", st.AfterLoadBytes(), 21_429_231_616},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	if _, err := Calculate(Inputs{Model: m, ContextTokens: 8192, MeanTokens: 9000, Concurrency: 1}); err == nil ||
		!strings.Contains(err.Error(), "mean tokens 9000: want at most the context, 8192") {
		t.Errorf("mean above context: got %v", err)
	}
	if _, err := Calculate(Inputs{Model: m, ContextTokens: 8192, Cache: "paged", Concurrency: 1}); err == nil ||
		!strings.Contains(err.Error(), `cache "paged": want dynamic or static`) {
		t.Errorf("unknown cache: got %v", err)
	}
}

// TestKVOffload: Llama-3.1-8B, 8,192 tokens, 8 sequences, half the KV in CPU memory.
//
//	KV 8 × 1 GiB = 8 GiB: 4,294,967,296 B on the card, 4,294,967,296 B in CPU memory.
//	total = weights 16,060,522,496 + prefill 704,643,072 + overhead 1,073,741,824
//	  + 8 × (536,870,912 + 513,024 logits) = 22,137,978,880 B
//	H100 (72e9 B usable): (72e9/1.1 − 17,838,907,392) / 537,383,936 = 88.6 → 88; without margin 100.
//	PCIe floor per decode step: 4,294,967,296 B / 64e9 B/s = 67.108864 ms (H100, Gen5); / 32e9 = 134.217728 ms (L4).
func TestKVOffload(t *testing.T) {
	e, err := Calculate(Inputs{Model: mustPreset(t, "Llama-3.1-8B"), ContextTokens: 8192, Concurrency: 8, KVOffload: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if e.KVBytes != 4<<30 || e.KVCPUBytes != 4<<30 || e.TotalBytes != 22_137_978_880 {
		t.Errorf("got card KV %d CPU KV %d total %d, want 4 GiB, 4 GiB, 22,137,978,880", e.KVBytes, e.KVCPUBytes, e.TotalBytes)
	}
	h, _ := e.FitFor("H100 SXM")
	l4, _ := e.FitFor("L4")
	if h.MaxConcurrency != 88 || h.MaxConcurrencyNoMargin != 100 {
		t.Errorf("H100 max concurrency: got %d (%d), want 88 (100)", h.MaxConcurrency, h.MaxConcurrencyNoMargin)
	}
	if math.Abs(h.OffloadStepMS-67.108864) > 1e-9 || math.Abs(l4.OffloadStepMS-134.217728) > 1e-9 {
		t.Errorf("offload step: got H100 %v ms, L4 %v ms", h.OffloadStepMS, l4.OffloadStepMS)
	}
	if _, err := Calculate(Inputs{Model: mustPreset(t, "Llama-3.1-8B"), ContextTokens: 8, Concurrency: 1, KVOffload: 1}); err == nil {
		t.Error("offloading the whole KV cache: want an error")
	}
}

// TestMoE: Mixtral-8x7B in bf16 keeps all 46,702,792,704 parameters
// resident (93,405,585,408 B) but a token reads 12,879,925,248 × 2 =
// 25,759,850,496 B: the H100's decode ceiling is 3350e9 / 25,759,850,496 =
// 130.05 tok/s, not 3350e9 / 93.4e9 = 35.9. A prefill chunk routes each
// token to 2 experts: width 2 × 4096 + 4096 + 2 × 1024 + 2 × 2 × 14,336 =
// 71,680, × 8,192 tokens × 2 B = 1,174,405,120 B.
func TestMoE(t *testing.T) {
	e, err := Calculate(Inputs{Model: mustPreset(t, "Mixtral-8x7B"), ContextTokens: 4096, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e.WeightBytes != 93_405_585_408 || e.ActiveWeightBytes != 25_759_850_496 || e.PrefillBytes != 1_174_405_120 {
		t.Errorf("got weights %d active %d prefill %d", e.WeightBytes, e.ActiveWeightBytes, e.PrefillBytes)
	}
	h, _ := e.FitFor("H100 SXM")
	if math.Abs(h.DecodeCeilingTokS-130.0473386) > 1e-6 || h.Fits {
		t.Errorf("H100: got ceiling %v fits %v, want 130.05 tok/s and no fit (93.4 GB of weights > 72 GB usable)", h.DecodeCeilingTokS, h.Fits)
	}
	if hh, _ := e.FitFor("H200"); !hh.Fits {
		t.Error("H200 (126.9e9 B usable) should hold Mixtral in bf16")
	}
}

// TestTensorParallel: Llama-3.1-70B in bf16 over 4 cards, 8,192 tokens, 8 sequences.
//
//	weights 70,553,706,496 params × 2 B = 141,107,412,992 B; per card / 4 = 35,276,853,248
//	KV heads per card 8 / 4 = 2: per token 2 × 80 × 2 × 128 × 2 B = 81,920 B; × 8,192 = 671,088,640 B
//	prefill per card: width 2 × 8192 + 64/4 × 128 + 2 × 2 × 128 + 2 × 28,672 / 4 = 33,280; × 8,192 × 2 B = 545,259,520
//	buffers: 8,192 × 8,192 × 2 B = 134,217,728 + NCCL 268,435,456 = 402,653,184
//	fixed 37,298,507,776; per sequence 671,088,640 + 513,024 logits = 671,601,664
//	total 42,671,321,088 B; with 10% margin 46,938,453,197 B
//	H100 (72e9 usable): (72e9/1.1 − 37,298,507,776) / 671,601,664 = 41.9 → 41; without margin 51
//	decode ceiling per card: 3350e9 / 35,276,853,248 = 94.96 tok/s
//
// Over 16 cards the 8 KV heads are replicated: 1 per card.
func TestTensorParallel(t *testing.T) {
	m := mustPreset(t, "Llama-3.1-70B")
	e, err := Calculate(Inputs{Model: m, ContextTokens: 8192, Concurrency: 8, TP: 4})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want int64
	}{
		{"model weights", e.ModelWeightBytes, 141_107_412_992},
		{"weights per card", e.WeightBytes, 35_276_853_248},
		{"KV per token", e.KVBytesPerToken, 81_920},
		{"KV per sequence", e.KVBytesPerSeq, 671_088_640},
		{"prefill", e.PrefillBytes, 545_259_520},
		{"buffers", e.CommBytes, 402_653_184},
		{"total", e.TotalBytes, 42_671_321_088},
		{"total with margin", e.TotalWithMarginBytes, 46_938_453_197},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	h, _ := e.FitFor("H100 SXM")
	if !h.Fits || h.MaxConcurrency != 41 || h.MaxConcurrencyNoMargin != 51 || math.Abs(h.DecodeCeilingTokS-94.963118633) > 1e-6 {
		t.Errorf("4× H100: got fits %v max %d (%d) ceiling %v", h.Fits, h.MaxConcurrency, h.MaxConcurrencyNoMargin, h.DecodeCeilingTokS)
	}
	e16, err := Calculate(Inputs{Model: m, ContextTokens: 8192, Concurrency: 1, TP: 16})
	if err != nil {
		t.Fatal(err)
	}
	if e16.KVHeadsPerCard != 1 || e16.KVBytesPerToken != 2*80*128*2 {
		t.Errorf("tp 16: got %d KV heads per card, %d B per token; want 1 and 40,960", e16.KVHeadsPerCard, e16.KVBytesPerToken)
	}
	if _, err := Calculate(Inputs{Model: m, ContextTokens: 8192, Concurrency: 1, TP: 3}); err == nil ||
		!strings.Contains(err.Error(), "64 attention heads do not split evenly over 3 cards") {
		t.Errorf("tp 3: got %v", err)
	}
}

// TestFP4Weights: NVFP4 is 0.5 + 1/16 = 0.5625 B a linear parameter:
// Llama-3.1-8B 6,979,321,856 × 0.5625 = 3,925,868,544 + 2,101,878,784 in 16 bits.
func TestFP4Weights(t *testing.T) {
	e, err := Calculate(Inputs{Model: mustPreset(t, "Llama-3.1-8B"), Weights: FP4, ContextTokens: 8192, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e.WeightBytes != 3_925_868_544+2_101_878_784 {
		t.Errorf("got %d", e.WeightBytes)
	}
	for _, f := range e.Fits {
		want := No
		if f.GPU.Name == "B200" {
			want = Yes
		}
		if f.Support[0].Status != want {
			t.Errorf("%s: fp4 weights %s, want %s", f.GPU.Name, f.Support[0].Status, want)
		}
	}
}

func TestCompatibility(t *testing.T) {
	get := func(name string) GPU {
		g, ok := FindGPU(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		return g
	}
	tests := []struct {
		gpu  string
		got  Support
		want string
	}{
		{"L4", WeightSupport(get("L4"), FP8), Yes},
		{"A100", WeightSupport(get("A100"), FP8), Partial},
		{"A100", WeightSupport(get("A100"), BF16), Yes},
		{"A100", KVSupport(get("A100"), FP8), Partial},
		{"H200", KVSupport(get("H200"), FP8), Yes},
		{"L40S", WeightSupport(get("L40S"), INT4), Yes},
		{"L4", AttentionSupport(get("L4"))[1], No},
		{"H100", AttentionSupport(get("H100"))[1], Yes},
		{"A100", AttentionSupport(get("A100"))[0], Yes},
		{"custom", WeightSupport(GPU{Name: "A10G", DatasheetGB: 24}, BF16), Unknown},
	}
	for _, tt := range tests {
		if tt.got.Status != tt.want {
			t.Errorf("%s %s: got %s, want %s", tt.gpu, tt.got.Feature, tt.got.Status, tt.want)
		}
	}
}

func TestCheckEnvironment(t *testing.T) {
	// The H200 reference: CUDA 13.0 driver, torch built for cu130: fine.
	ec := CheckEnvironment("NVIDIA H200", "13.0", "580.159.04", "transformers-5.17.0+torch-2.11.0+cu130", BF16, BF16)
	if len(ec.Problems) != 0 || ec.Arch != "Hopper 9.0" {
		t.Errorf("H200 reference: got %+v", ec)
	}
	ec = CheckEnvironment("NVIDIA L4", "12.4", "550.54", "vllm 0.11.0+cu128", FP8, FP8)
	if len(ec.Problems) != 1 || !strings.Contains(ec.Problems[0], "engine built for CUDA 12.8 but the driver runs CUDA 12.4 at most") {
		t.Errorf("L4 with an old driver: got %v", ec.Problems)
	}
	ec = CheckEnvironment("NVIDIA B200", "12.4", "550.54", "", FP4, BF16)
	want := []string{"CUDA 12.4 on B200 (Blackwell): the architecture needs CUDA 12.8 or later", "engine version not recorded: pin it"}
	if strings.Join(ec.Problems, "|") != strings.Join(want, "|") {
		t.Errorf("B200: got %q, want %q", ec.Problems, want)
	}
	if ec := CheckEnvironment("Tesla T4", "12.4", "", "x", BF16, BF16); len(ec.Problems) != 1 {
		t.Errorf("T4: got %v", ec.Problems)
	}
}

// TestParseLayerTypes: layer_types decides over the architecture's pattern;
// a Qwen2 window switched off (use_sliding_window false) is no window.
func TestParseLayerTypes(t *testing.T) {
	cfg := `{"model_type":"gemma3_text","hidden_size":64,"num_hidden_layers":6,"num_attention_heads":4,"num_key_value_heads":2,
		"intermediate_size":128,"vocab_size":100,"max_position_embeddings":131072,"sliding_window":512,
		"layer_types":["sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention"]}`
	m, err := ParseHFConfig([]byte(cfg), "g3")
	if err != nil {
		t.Fatal(err)
	}
	if m.SlidingWindow != 512 || m.SlidingLayers != 5 || m.NormsPerLayer != 4 || !m.TieWordEmbeddings {
		t.Errorf("got window %d on %d layers, %d norms, tied %v; want 512 on 5, 4, true", m.SlidingWindow, m.SlidingLayers, m.NormsPerLayer, m.TieWordEmbeddings)
	}
	// 1,000 tokens: 2 × 2 × 16 × 2 B = 128 B × (1 × 1,000 + 5 × 512) = 455,680 B.
	e, err := Calculate(Inputs{Model: m, ContextTokens: 1000, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e.KVBytesPerSeq != 455_680 {
		t.Errorf("KV per sequence: got %d, want 455,680", e.KVBytesPerSeq)
	}
	q := mustPreset(t, "Qwen2.5-7B")
	if q.SlidingWindow != 0 {
		t.Errorf("Qwen2.5-7B: got a window of %d", q.SlidingWindow)
	}
}
