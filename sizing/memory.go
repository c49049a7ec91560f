package sizing

import (
	"fmt"
	"math"
	"strings"
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
)

// WeightBytes is the bytes one quantised linear-layer parameter takes,
// scales included: int4 packs two weights a byte plus an fp16 scale and
// an fp16 zero point per group (0.5 + 4/group bytes); int8 and fp8 scales
// are per channel or per tensor and round to nothing.
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
	}
	return 0, fmt.Errorf("weight precision %q: want bf16, fp16, fp8, int8 or int4", p)
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
}

// Estimate is the calculator's answer. Byte counts are exact integers;
// printing converts them to GiB.
type Estimate struct {
	Model           string    `json:"model"`
	Shape           Model     `json:"shape"`
	Weights         Precision `json:"weights_precision"`
	GroupSize       int       `json:"group_size,omitempty"`
	KV              Precision `json:"kv_precision"`
	ContextTokens   int       `json:"context_tokens"`
	Concurrency     int       `json:"concurrency"`
	Utilisation     float64   `json:"utilisation"`
	Margin          float64   `json:"margin"`
	Params          int64     `json:"params"`
	QuantisedParams int64     `json:"quantised_params"` // the linear layers
	// WeightBytes is the linear layers at their precision plus the rest in 16 bits.
	WeightBytes     int64 `json:"weight_bytes"`
	KVBytesPerToken int64 `json:"kv_bytes_per_token"` // 2 × layers × kv_heads × head_dim × bytes
	KVBytesPerSeq   int64 `json:"kv_bytes_per_sequence"`
	KVBytes         int64 `json:"kv_bytes"` // × concurrency
	// ActivationBytes is one prefill chunk's largest live tensors
	// (PrefillBytes) plus one fp32 logits row per sequence (LogitBytesPerSeq).
	ActivationBytes  int64 `json:"activation_bytes"`
	PrefillBytes     int64 `json:"prefill_activation_bytes"`
	LogitBytesPerSeq int64 `json:"logit_bytes_per_sequence"`
	OverheadBytes    int64 `json:"overhead_bytes"` // RuntimeOverheadBytes
	TotalBytes       int64 `json:"total_bytes"`    // weights + KV + activations + overhead
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
	// DecodeCeilingTokS is bandwidth / weight bytes: an upper bound on one
	// sequence's decode speed, since each token reads every weight once.
	DecodeCeilingTokS float64 `json:"decode_ceiling_tok_per_s,omitempty"`
}

// Calculate sizes a model on each card: MEASUREMENT.md section 5's
// calculator, with the buffers and margin written down.
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
	util := in.Utilisation
	if util == 0 {
		util = DefaultUtilisation
	}
	if util < 0 || util > 1 {
		return Estimate{}, fmt.Errorf("utilisation %g: want a share of memory between 0 and 1", util)
	}
	margin := in.Margin
	switch {
	case margin == 0:
		margin = DefaultMargin
	case margin < 0:
		margin = 0
	}
	prefill := in.PrefillTokens
	if prefill <= 0 {
		prefill = DefaultPrefillTokens
	}
	gpus := in.GPUs
	if gpus == nil {
		gpus = Catalog
	}

	pc := m.Params()
	e := Estimate{
		Model: m.Name, Shape: m, Weights: in.Weights, KV: in.KV, ContextTokens: in.ContextTokens,
		Concurrency: in.Concurrency, Utilisation: util, Margin: margin,
		Params: pc.Total(), QuantisedParams: pc.Linear,
	}
	if in.Weights == INT4 {
		e.GroupSize = in.GroupSize
		if e.GroupSize <= 0 {
			e.GroupSize = DefaultGroupSize
		}
	}
	e.WeightBytes = int64(math.Ceil(float64(pc.Linear)*wb)) + pc.Other*2
	e.KVBytesPerToken = 2 * int64(m.Layers) * int64(m.KVHeads) * int64(m.HeadDim) * kvb
	e.KVBytesPerSeq = e.KVBytesPerToken * int64(in.ContextTokens)
	e.KVBytes = e.KVBytesPerSeq * int64(in.Concurrency)
	e.LogitBytesPerSeq = int64(m.VocabSize) * logitBytesPerElement
	e.PrefillBytes = prefillActivationBytes(m, prefill)
	e.ActivationBytes = e.PrefillBytes + e.LogitBytesPerSeq*int64(in.Concurrency)
	e.OverheadBytes = RuntimeOverheadBytes
	e.TotalBytes = e.At(in.Concurrency)
	e.TotalWithMarginBytes = int64(math.Ceil(float64(e.TotalBytes) * (1 + margin)))

	fixed, perSeq := e.FixedBytes(), e.PerSeqBytes()
	for _, g := range gpus {
		f := Fit{GPU: g, MemoryBytes: g.Bytes()}
		f.UsableBytes = int64(float64(f.MemoryBytes) * util)
		f.Fits = e.TotalWithMarginBytes <= f.UsableBytes
		f.HeadroomBytes = f.UsableBytes - e.TotalWithMarginBytes
		f.MaxConcurrency = sequencesThatFit(float64(f.UsableBytes)/(1+margin), fixed, perSeq)
		f.MaxConcurrencyNoMargin = sequencesThatFit(float64(f.UsableBytes), fixed, perSeq)
		if g.BandwidthGBs > 0 {
			f.DecodeCeilingTokS = g.BandwidthGBs * GB / float64(e.WeightBytes)
		}
		e.Fits = append(e.Fits, f)
	}
	return e, nil
}

// FixedBytes is what does not grow with concurrency: weights, one prefill
// chunk's activations and the runtime overhead.
func (e Estimate) FixedBytes() int64 { return e.WeightBytes + e.PrefillBytes + e.OverheadBytes }

// PerSeqBytes is what each sequence held at once adds: its KV cache at
// ContextTokens and its logits row.
func (e Estimate) PerSeqBytes() int64 { return e.KVBytesPerSeq + e.LogitBytesPerSeq }

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

// prefillActivationBytes sizes the live tensors of one prefill chunk: the
// residual stream and the attention output (hidden each), q, k and v
// (heads·head_dim + 2·kv_heads·head_dim) and the gated MLP's gate and up
// projections (2 × intermediate), in 16 bits. Engines free them between
// layers, so one layer's worth is the peak.
func prefillActivationBytes(m Model, tokens int) int64 {
	width := 2*m.HiddenSize + m.Heads*m.HeadDim + 2*m.KVHeads*m.HeadDim + 2*m.IntermediateSize
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
	return fmt.Sprintf("%s (%s B)", GiBString(b), GroupDigits(b))
}

// GiBString formats bytes as GiB with two decimals, MiB or KiB below one GiB.
func GiBString(b int64) string {
	switch a := math.Abs(float64(b)); {
	case a >= GiB:
		return fmt.Sprintf("%.2f GiB", float64(b)/GiB)
	case a >= MiB:
		return fmt.Sprintf("%.1f MiB", float64(b)/MiB)
	case a >= KiB:
		return fmt.Sprintf("%.1f KiB", float64(b)/KiB)
	}
	return fmt.Sprintf("%d B", b)
}

// GroupDigits writes an integer with thousands separators (16,060,522,496).
func GroupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
