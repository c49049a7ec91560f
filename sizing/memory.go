package sizing

import (
	"fmt"
	"math"
	"strings"

	"github.com/extractbench/extractbench/numfmt"
)

// Precision is how weights or KV-cache elements are stored.
type Precision string

// The precisions the calculator knows.
const (
	BF16 Precision = "bf16"
	FP16 Precision = "fp16"
	FP8  Precision = "fp8"
	INT8 Precision = "int8"
	INT4 Precision = "int4"
	FP4  Precision = "fp4" // NVFP4: Blackwell's 4-bit float with an fp8 scale per 16 values
)

// Named defaults of the calculator. Buffers are estimates written down so
// that they can be argued with; a run's measured peaks are what to believe.
const (
	// DefaultUtilisation is the share of a card's memory an engine is let
	// use (vLLM's gpu_memory_utilization default is 0.90): the rest is left
	// to fragmentation and anything else on the card.
	DefaultUtilisation = 0.90
	// DefaultMargin is kept on top of the estimate because the estimate
	// leaves things out (allocator rounding, kernels' scratch space) and
	// the peak does not shrink in proportion after quantising.
	DefaultMargin = 0.10
	// DefaultGroupSize is the int4 quantisation group: one fp16 scale and one
	// fp16 zero point per 128 weights (the GPTQ/AWQ default).
	DefaultGroupSize = 128
	// DefaultPrefillTokens is the prefill chunk an engine processes at once
	// (max_num_batched_tokens); activations are sized for one such chunk.
	DefaultPrefillTokens = 8192
	// RuntimeOverheadBytes is memory the engine process holds besides
	// tensors: the CUDA context (a few hundred MiB per process), cuBLAS
	// workspaces and captured CUDA graphs. A round 1 GiB.
	RuntimeOverheadBytes = 1 << 30
	// activationBytesPerElement: activations are kept in 16 bits whatever
	// the weights' precision.
	activationBytesPerElement = 2
	// logitBytesPerElement: sampling reads fp32 logits, one vocabulary row
	// per running sequence.
	logitBytesPerElement = 4
	// NCCLBufferBytes is what NCCL holds per card for tensor parallelism
	// besides the tensors it moves: NCCL_BUFFSIZE 4 MiB × send and receive ×
	// up to 32 channels = 256 MiB, an estimate written down to be argued with.
	NCCLBufferBytes = 256 << 20
)

// Cache is how an engine holds the KV cache.
type Cache string

// The KV-cache strategies. A dynamic (paged) cache grows with the tokens
// the sequences hold (vLLM, SGLang, TGI); a static cache reserves every
// slot's full context at start-up (transformers' StaticCache, TensorRT-LLM's
// fixed pools), so its memory after load already holds the whole KV cache.
const (
	DynamicCache Cache = "dynamic"
	StaticCache  Cache = "static"
)

// WeightBytes is the bytes one quantised linear-layer parameter takes,
// scales included: int4 packs two weights a byte plus an fp16 scale and
// an fp16 zero point per group (0.5 + 4/group bytes); fp4 (NVFP4) two a
// byte plus an fp8 scale per 16 (0.5625); int8 and fp8 scales are per
// channel or per tensor and round to nothing.
func (p Precision) WeightBytes(group int) (float64, error) {
	switch p {
	case BF16, FP16:
		return 2, nil
	case FP8, INT8:
		return 1, nil
	case INT4:
		if group <= 0 {
			group = DefaultGroupSize
		}
		return 0.5 + 4/float64(group), nil
	case FP4:
		return 0.5 + 1.0/16, nil
	}
	return 0, fmt.Errorf("weight precision %q: want bf16, fp16, fp8, int8, int4 or fp4", p)
}

// KVBytes is the bytes one KV-cache element takes.
func (p Precision) KVBytes() (int64, error) {
	switch p {
	case BF16, FP16:
		return 2, nil
	case FP8:
		return 1, nil
	}
	return 0, fmt.Errorf("KV precision %q: want bf16, fp16 or fp8", p)
}

// Inputs are what the calculator is asked.
type Inputs struct {
	Model         Model
	Weights       Precision // of the linear layers; embeddings, head and norms stay in 16 bits
	GroupSize     int       // int4 group size; 0 = DefaultGroupSize
	KV            Precision
	ContextTokens int     // tokens per sequence: prompt and output, the longest expected
	Concurrency   int     // sequences held at once
	Utilisation   float64 // 0 = DefaultUtilisation
	Margin        float64 // fraction on top of the estimate; 0 = DefaultMargin, negative = none
	PrefillTokens int     // 0 = DefaultPrefillTokens
	GPUs          []GPU   // nil = Catalog
	// Cache is dynamic (default) or static. MeanTokens is what a dynamic
	// cache holds per sequence on average (0 = ContextTokens, the worst
	// case); a static cache reserves ContextTokens per slot whatever is used.
	Cache      Cache
	MeanTokens int
	// KVOffload is the share of the KV cache kept in CPU memory (0–1):
	// card memory saved, PCIe transfers paid at every decode step.
	KVOffload float64
	// TP is the tensor-parallel degree: the model split over TP cards of
	// the same kind (0 = 1). Figures are then per card.
	TP int
	// GGUF is a GGUF scheme (GGUFTensors': bf16, f16, q8_0, q6_k, q4_k_m,
	// q4_0): the weights are then that file's tensors as llama-quantize
	// makes them (GGUFWeightBytes), not Weights' bytes per parameter.
	GGUF string
	// AdmissionReserve is the share (0 to below 1) of the KV budget an
	// engine's scheduler keeps from new sequences: it admits one only while
	// at least that share is free, so the running sequences have room to
	// grow without preemption (transformers' FIFO scheduler: its
	// safety_margin, TransformersFIFOReserve). 0: admission until the pool
	// is full (vLLM, which preempts instead; llama.cpp's fixed slots).
	AdmissionReserve float64
}

// TransformersFIFOReserve is the share of KV blocks transformers' FIFO
// scheduler keeps free before admitting a prefill (its safety_margin, read
// live on the H200 in reference/h200/margin): with it the calculator lands
// 0 to 2% under the measured admission boundaries, against 12-16% over
// without.
const TransformersFIFOReserve = 0.15

// Estimate is the calculator's answer. Byte counts are exact integers;
// printing converts them to GiB. With tensor parallelism (TP > 1) every
// byte figure but ModelWeightBytes and KVCPUBytes is per card.
type Estimate struct {
	Model   string    `json:"model"`
	Shape   Model     `json:"shape"`
	Weights Precision `json:"weights_precision"`
	// GGUF is the GGUF scheme the weights were sized as (Inputs.GGUF), and
	// GGUFFallbacks how many of its tensors llama-quantize gives another
	// type than the scheme's because their rows do not fit its blocks.
	GGUF            string    `json:"gguf,omitempty"`
	GGUFFallbacks   int       `json:"gguf_fallbacks,omitempty"`
	GroupSize       int       `json:"group_size,omitempty"`
	KV              Precision `json:"kv_precision"`
	Cache           Cache     `json:"cache"`
	ContextTokens   int       `json:"context_tokens"`
	HeldTokens      int       `json:"held_tokens"` // per sequence: ContextTokens, or MeanTokens for a dynamic cache
	Concurrency     int       `json:"concurrency"`
	TP              int       `json:"tensor_parallel"`
	Utilisation     float64   `json:"utilisation"`
	Margin          float64   `json:"margin"`
	Params          int64     `json:"params"`
	ActiveParams    int64     `json:"active_params"`    // per token: differs from Params in a mixture of experts
	QuantisedParams int64     `json:"quantised_params"` // the linear layers
	// ModelWeightBytes is the whole model: the linear layers at their
	// precision plus the rest in 16 bits. WeightBytes is one card's share
	// (ModelWeightBytes / TP, rounded up); ActiveWeightBytes the bytes one
	// token reads on a card (a mixture of experts reads ExpertsPerToken experts).
	ModelWeightBytes  int64 `json:"model_weight_bytes"`
	WeightBytes       int64 `json:"weight_bytes"`
	ActiveWeightBytes int64 `json:"active_weight_bytes"`
	// KVHeadsPerCard is ceil(KV heads / TP): heads are split, and
	// replicated when TP exceeds them.
	KVHeadsPerCard int `json:"kv_heads_per_card"`
	// KVBytesPerToken is 2 × layers × KV heads × head dim × bytes: what a
	// token costs while the sequence is shorter than any sliding window.
	KVBytesPerToken int64 `json:"kv_bytes_per_token"`
	// KVBytesPerSeq is 2 × KV heads × head dim × bytes × (full layers ×
	// held tokens + sliding layers × min(held tokens, window)).
	KVBytesPerSeq int64 `json:"kv_bytes_per_sequence"`
	// KVBytes is the KV cache of Concurrency sequences on the card: the
	// share not offloaded.
	KVBytes        int64   `json:"kv_bytes"`
	KVOffloadShare float64 `json:"kv_offload_share,omitempty"`
	// AdmissionReserve is Inputs.AdmissionReserve: the max concurrencies
	// count the sequences such a scheduler admits, not all that would fit.
	AdmissionReserve float64 `json:"admission_reserve,omitempty"`
	KVCPUBytes       int64   `json:"kv_cpu_bytes,omitempty"` // offloaded, all cards together
	// KVAtLoadBytes is the KV cache held before any request: all of it for
	// a static cache, none for a dynamic one.
	KVAtLoadBytes int64 `json:"kv_at_load_bytes"`
	// ActivationBytes is one prefill chunk's largest live tensors
	// (PrefillBytes) plus one fp32 logits row per sequence (LogitBytesPerSeq).
	ActivationBytes  int64 `json:"activation_bytes"`
	PrefillBytes     int64 `json:"prefill_activation_bytes"`
	LogitBytesPerSeq int64 `json:"logit_bytes_per_sequence"`
	OverheadBytes    int64 `json:"overhead_bytes"` // RuntimeOverheadBytes
	// CommBytes is tensor parallelism's buffers: one prefill chunk's hidden
	// states for the all-reduce plus NCCLBufferBytes; 0 on one card.
	CommBytes  int64 `json:"comm_bytes"`
	TotalBytes int64 `json:"total_bytes"` // weights + KV + activations + overhead + comm
	// TotalWithMarginBytes is TotalBytes × (1 + margin): what must fit in
	// memory × utilisation.
	TotalWithMarginBytes int64 `json:"total_with_margin_bytes"`
	Fits                 []Fit `json:"fits"`
}

// Fit is whether the estimate fits one card and how far it can be pushed.
type Fit struct {
	GPU         GPU   `json:"gpu"`
	MemoryBytes int64 `json:"memory_bytes"`
	UsableBytes int64 `json:"usable_bytes"` // memory × utilisation
	Fits        bool  `json:"fits"`         // TotalWithMarginBytes ≤ UsableBytes
	// MaxConcurrency is the most sequences of ContextTokens that fit with
	// the margin; MaxConcurrencyNoMargin is MEASUREMENT.md section 5's
	// formula as it stands: (memory × utilisation − weights − buffers) /
	// (KV per token × tokens per sequence).
	MaxConcurrency         int   `json:"max_concurrency"`
	MaxConcurrencyNoMargin int   `json:"max_concurrency_no_margin"`
	HeadroomBytes          int64 `json:"headroom_bytes"` // usable − total with margin; negative when it does not fit
	// DecodeCeilingTokS is bandwidth / active weight bytes per card: an
	// upper bound on one sequence's decode speed, since each token reads
	// every weight it uses once.
	DecodeCeilingTokS float64 `json:"decode_ceiling_tok_per_s,omitempty"`
	// OffloadStepMS is the offloaded KV of one card crossing PCIe once (it
	// is read back at every decode step): a floor on the step's time.
	OffloadStepMS float64 `json:"offload_step_ms,omitempty"`
	// Support is the card's kernels for the estimate's precisions
	// (SupportFor).
	Support []Support `json:"support"`
}

// Calculate sizes a model on each card: MEASUREMENT.md section 5's
// calculator, with the buffers and margin written down, sliding-window
// layers, KV precision and offload, static or dynamic cache, a mixture of
// experts and tensor parallelism.
func Calculate(in Inputs) (Estimate, error) {
	m := in.Model
	if m.Layers <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || m.HiddenSize <= 0 {
		return Estimate{}, fmt.Errorf("model %q: shape incomplete (layers %d, kv heads %d, head dim %d, hidden %d)",
			m.Name, m.Layers, m.KVHeads, m.HeadDim, m.HiddenSize)
	}
	if in.ContextTokens <= 0 {
		return Estimate{}, fmt.Errorf("context length %d: want a positive number of tokens", in.ContextTokens)
	}
	if in.Concurrency <= 0 {
		return Estimate{}, fmt.Errorf("concurrency %d: want at least 1 sequence", in.Concurrency)
	}
	if in.Weights == "" {
		in.Weights = BF16
		if p, ok := ggufPrecision[strings.ToLower(in.GGUF)]; ok {
			in.Weights = p
		}
	}
	if in.KV == "" {
		in.KV = BF16
	}
	wb, err := in.Weights.WeightBytes(in.GroupSize)
	if err != nil {
		return Estimate{}, err
	}
	kvb, err := in.KV.KVBytes()
	if err != nil {
		return Estimate{}, err
	}
	util, margin, err := utilAndMargin(in.Utilisation, in.Margin)
	if err != nil {
		return Estimate{}, err
	}
	prefill := in.PrefillTokens
	if prefill <= 0 {
		prefill = DefaultPrefillTokens
	}
	if in.Cache == "" {
		in.Cache = DynamicCache
	}
	held := in.ContextTokens
	switch in.Cache {
	case StaticCache:
	case DynamicCache:
		if in.MeanTokens > in.ContextTokens {
			return Estimate{}, fmt.Errorf("mean tokens %d: want at most the context, %d", in.MeanTokens, in.ContextTokens)
		}
		if in.MeanTokens > 0 {
			held = in.MeanTokens
		}
	default:
		return Estimate{}, fmt.Errorf("cache %q: want dynamic or static", in.Cache)
	}
	if in.AdmissionReserve < 0 || in.AdmissionReserve >= 1 {
		return Estimate{}, fmt.Errorf("admission reserve %g: want a share of the KV budget from 0 to below 1", in.AdmissionReserve)
	}
	if in.KVOffload < 0 || in.KVOffload >= 1 {
		return Estimate{}, fmt.Errorf("KV offload %g: want a share of the KV cache from 0 to below 1", in.KVOffload)
	}
	tp := max(in.TP, 1)
	if m.Heads%tp != 0 {
		return Estimate{}, fmt.Errorf("tensor parallel %d: %d attention heads do not split evenly over %d cards", tp, m.Heads, tp)
	}
	gpus := in.GPUs
	if gpus == nil {
		gpus = Catalog
	}

	pc := m.Params()
	e := Estimate{
		Model: m.Name, Shape: m, Weights: in.Weights, KV: in.KV, Cache: in.Cache, ContextTokens: in.ContextTokens,
		HeldTokens: held, Concurrency: in.Concurrency, TP: tp, Utilisation: util, Margin: margin,
		Params: pc.Total(), ActiveParams: pc.Active(), QuantisedParams: pc.Linear, KVOffloadShare: in.KVOffload,
		AdmissionReserve: in.AdmissionReserve,
	}
	if in.Weights == INT4 {
		e.GroupSize = in.GroupSize
		if e.GroupSize <= 0 {
			e.GroupSize = DefaultGroupSize
		}
	}
	e.ModelWeightBytes = int64(math.Ceil(float64(pc.Linear)*wb)) + pc.Other*2
	e.WeightBytes = ceilDiv(e.ModelWeightBytes, int64(tp))
	e.ActiveWeightBytes = ceilDiv(int64(math.Ceil(float64(pc.ActiveLinear)*wb))+pc.Other*2, int64(tp))
	if in.GGUF != "" {
		// A dense model's GGUF: every token reads every tensor.
		b, fell, err := GGUFWeightBytes(m, in.GGUF)
		if err != nil {
			return Estimate{}, err
		}
		e.GGUF, e.GGUFFallbacks = strings.ToLower(in.GGUF), fell
		e.ModelWeightBytes = b
		e.WeightBytes = ceilDiv(b, int64(tp))
		e.ActiveWeightBytes = e.WeightBytes
	}
	e.KVHeadsPerCard = ceilDiv(m.KVHeads, tp)
	perLayerToken := 2 * int64(e.KVHeadsPerCard) * int64(m.HeadDim) * kvb
	e.KVBytesPerToken = int64(m.Layers) * perLayerToken
	e.KVBytesPerSeq = perLayerToken * m.kvTokens(held)
	kvAll := e.KVBytesPerSeq * int64(in.Concurrency)
	e.KVBytes = kvAll - int64(math.Floor(float64(kvAll)*in.KVOffload))
	e.KVCPUBytes = (kvAll - e.KVBytes) * int64(tp)
	if in.Cache == StaticCache {
		e.KVAtLoadBytes = e.KVBytes
	}
	e.LogitBytesPerSeq = int64(m.VocabSize) * logitBytesPerElement
	e.PrefillBytes = prefillActivationBytes(m, prefill, tp)
	e.ActivationBytes = e.PrefillBytes + e.LogitBytesPerSeq*int64(in.Concurrency)
	e.OverheadBytes = RuntimeOverheadBytes
	if tp > 1 {
		e.CommBytes = int64(prefill)*int64(m.HiddenSize)*activationBytesPerElement + NCCLBufferBytes
	}
	e.TotalBytes = e.At(in.Concurrency)
	e.TotalWithMarginBytes = int64(math.Ceil(float64(e.TotalBytes) * (1 + margin)))

	fixed, perSeq := e.FixedBytes(), e.PerSeqBytes()
	for _, g := range gpus {
		f := Fit{GPU: g, MemoryBytes: g.Bytes()}
		f.UsableBytes = int64(float64(f.MemoryBytes) * util)
		f.Fits = e.TotalWithMarginBytes <= f.UsableBytes
		f.HeadroomBytes = f.UsableBytes - e.TotalWithMarginBytes
		f.MaxConcurrency = sequencesAdmitted(float64(f.UsableBytes)/(1+margin), fixed, perSeq, in.AdmissionReserve)
		f.MaxConcurrencyNoMargin = sequencesAdmitted(float64(f.UsableBytes), fixed, perSeq, in.AdmissionReserve)
		if g.BandwidthGBs > 0 {
			f.DecodeCeilingTokS = g.BandwidthGBs * GB / float64(e.ActiveWeightBytes)
		}
		if g.PCIeGBs > 0 && e.KVCPUBytes > 0 {
			f.OffloadStepMS = float64(e.KVCPUBytes/int64(tp)) / (g.PCIeGBs * GB) * 1e3
		}
		f.Support = SupportFor(g, e.Weights, e.KV)
		e.Fits = append(e.Fits, f)
	}
	return e, nil
}

// kvTokens is the token-layers one sequence of n tokens keeps: n on each
// full-attention layer, min(n, window) on each sliding-window layer.
func (m Model) kvTokens(n int) int64 {
	sliding := min(m.SlidingLayers, m.Layers)
	if m.SlidingWindow <= 0 {
		sliding = 0
	}
	return int64(m.Layers-sliding)*int64(n) + int64(sliding)*int64(min(n, m.SlidingWindow))
}

func ceilDiv[T int | int64](a, b T) T { return (a + b - 1) / b }

// FixedBytes is what does not grow with concurrency: weights, one prefill
// chunk's activations, the runtime overhead and tensor parallelism's buffers.
func (e Estimate) FixedBytes() int64 {
	return e.WeightBytes + e.PrefillBytes + e.OverheadBytes + e.CommBytes
}

// PerSeqBytes is what each sequence held at once adds on the card: the
// share of its KV cache not offloaded, and its logits row.
func (e Estimate) PerSeqBytes() int64 {
	return e.KVBytesPerSeq - int64(math.Floor(float64(e.KVBytesPerSeq)*e.KVOffloadShare)) + e.LogitBytesPerSeq
}

// AfterLoadBytes is what the card holds once the engine is ready and
// before any request: weights, runtime overhead, tensor-parallel buffers
// and, for a static cache, the whole KV cache.
func (e Estimate) AfterLoadBytes() int64 {
	return e.WeightBytes + e.OverheadBytes + e.CommBytes + e.KVAtLoadBytes
}

// At is the total without margin for n sequences of ContextTokens.
func (e Estimate) At(n int) int64 { return e.FixedBytes() + int64(n)*e.PerSeqBytes() }

// sequencesThatFit is floor((budget − fixed) / perSeq), never below zero.
func sequencesThatFit(budget float64, fixed, perSeq int64) int {
	left := budget - float64(fixed)
	if left <= 0 || perSeq <= 0 {
		return 0
	}
	return int(left / float64(perSeq))
}

// sequencesAdmitted is how many sequences a scheduler with an admission
// reserve (Inputs.AdmissionReserve) runs at once: it admits the next while at
// least reserve of what the fixed bytes leave is free, so one more than fit
// in the rest, and never more than fit at all.
func sequencesAdmitted(budget float64, fixed, perSeq int64, reserve float64) int {
	all := sequencesThatFit(budget, fixed, perSeq)
	if reserve <= 0 || all == 0 {
		return all
	}
	left := budget - float64(fixed)
	return min(all, int((1-reserve)*left/float64(perSeq))+1)
}

// prefillActivationBytes sizes the live tensors of one prefill chunk on one
// of tp cards: the residual stream and the attention output (hidden each,
// replicated), q, k and v (heads·head_dim + 2·kv_heads·head_dim, split) and
// the gated MLP's gate and up projections (2 × intermediate, split; in a
// mixture of experts each token's ExpertsPerToken experts), in 16 bits.
// Engines free them between layers, so one layer's worth is the peak.
func prefillActivationBytes(m Model, tokens, tp int) int64 {
	mlp := 2 * m.expertInter()
	if m.MoE() {
		mlp *= m.ExpertsPerToken
	}
	width := 2*m.HiddenSize + m.Heads/tp*m.HeadDim + 2*ceilDiv(m.KVHeads, tp)*m.HeadDim + ceilDiv(mlp, tp)
	return int64(tokens) * int64(width) * activationBytesPerElement
}

// FitFor returns the fit on the named card, or false.
func (e Estimate) FitFor(name string) (Fit, bool) {
	for _, f := range e.Fits {
		if strings.EqualFold(f.GPU.Name, name) {
			return f, true
		}
	}
	return Fit{}, false
}

// Bytes formats a byte count in GiB with the exact bytes ("14.96 GiB
// (16,060,522,496 B)") so that the unit is never in doubt.
func Bytes(b int64) string {
	return fmt.Sprintf("%s (%s B)", numfmt.GiBString(b), numfmt.GroupDigits(b))
}

// utilAndMargin applies the defaults to a share of card memory the engine
// may use and a margin: 0 means DefaultUtilisation and DefaultMargin; a
// negative margin is none.
func utilAndMargin(util, margin float64) (float64, float64, error) {
	if util == 0 {
		util = DefaultUtilisation
	}
	if util < 0 || util > 1 {
		return 0, 0, fmt.Errorf("utilisation %g: want a share of memory between 0 and 1", util)
	}
	switch {
	case margin == 0:
		margin = DefaultMargin
	case margin < 0:
		margin = 0
	}
	return util, margin, nil
}
