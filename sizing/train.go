package sizing

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/extractbench/extractbench/numfmt"
)

// TrainMethod is how a model is fine-tuned.
type TrainMethod string

// The fine-tuning methods the calculator sizes.
const (
	FullFineTune TrainMethod = "full"  // every weight trained, mixed precision with an fp32 master copy
	LoRA         TrainMethod = "lora"  // bf16 base frozen, low-rank adapters trained
	QLoRA        TrainMethod = "qlora" // NF4 base (double quantisation) frozen, adapters trained
)

// Optimizer is the optimizer whose states are kept for every trained parameter.
type Optimizer string

// The optimizers and their state bytes per trained parameter.
const (
	AdamW    Optimizer = "adamw"    // two fp32 moments: 8 B
	Adam8bit Optimizer = "adam8bit" // two 8-bit block-quantised moments: 2 B (bitsandbytes)
	SGD      Optimizer = "sgd"      // SGD with momentum, one fp32 buffer: 4 B
)

// Named defaults of the training calculator.
const (
	// DefaultLoRARank is the adapters' rank r.
	DefaultLoRARank = 16
	// nf4BytesPerParam is QLoRA's NF4 with double quantisation: 4 bits, one
	// 8-bit absmax per 64 weights, one fp32 constant per 256 absmax blocks:
	// 0.5 + 1/64 + 4/(64 × 256) = 2113/4096 = 0.515869140625 B (the paper's
	// 4.127 bits).
	nf4BytesPerParam = 2113.0 / 4096
)

// StateBytes is the optimizer's state per trained parameter.
func (o Optimizer) StateBytes() (float64, error) {
	switch o {
	case AdamW:
		return 8, nil
	case Adam8bit:
		return 2, nil
	case SGD:
		return 4, nil
	}
	return 0, fmt.Errorf("optimizer %q: want adamw, adam8bit or sgd", o)
}

// TrainInputs are what the training calculator is asked.
type TrainInputs struct {
	Model         Model
	Method        TrainMethod
	Optimizer     Optimizer // "" = AdamW
	MicroBatch    int       // sequences per forward/backward
	SeqLen        int       // tokens per sequence
	Checkpointing bool      // activation checkpointing: keep each layer's input, recompute the rest
	LoRARank      int       // 0 = DefaultLoRARank; adapters on every linear layer of every block
	Utilisation   float64   // 0 = DefaultUtilisation
	Margin        float64   // 0 = DefaultMargin, negative = none
	GPUs          []GPU     // nil = Catalog
}

// TrainEstimate is the memory a training step peaks at, by part (bytes).
type TrainEstimate struct {
	Model         string      `json:"model"`
	Method        TrainMethod `json:"method"`
	Optimizer     Optimizer   `json:"optimizer"`
	MicroBatch    int         `json:"micro_batch"`
	SeqLen        int         `json:"seq_len"`
	Checkpointing bool        `json:"activation_checkpointing"`
	LoRARank      int         `json:"lora_rank,omitempty"`
	Utilisation   float64     `json:"utilisation"`
	Margin        float64     `json:"margin"`
	Params        int64       `json:"params"`
	// TrainedParams is every parameter (full) or the adapters' (LoRA, QLoRA).
	TrainedParams int64 `json:"trained_params"`
	// WeightBytes is the model's weights: bf16, or for QLoRA the linear
	// layers in NF4 and the rest in bf16.
	WeightBytes int64 `json:"weight_bytes"`
	// MasterBytes is full fine-tuning's fp32 copy of the weights (4 B each).
	MasterBytes int64 `json:"master_weight_bytes"`
	// AdapterBytes is the LoRA adapters in fp32 (4 B each).
	AdapterBytes int64 `json:"adapter_bytes"`
	// GradientBytes is bf16 gradients for every weight (full) or fp32 ones
	// for the adapters.
	GradientBytes  int64 `json:"gradient_bytes"`
	OptimizerBytes int64 `json:"optimizer_bytes"`
	// ActivationBytes is what the backward pass needs saved, for the micro-batch.
	ActivationBytes int64 `json:"activation_bytes"`
	// LogitBytes is the bf16 logits and their fp32 copy for the loss.
	LogitBytes           int64      `json:"logit_bytes"`
	OverheadBytes        int64      `json:"overhead_bytes"`
	TotalBytes           int64      `json:"total_bytes"`
	TotalWithMarginBytes int64      `json:"total_with_margin_bytes"`
	Fits                 []TrainFit `json:"fits"`
}

// TrainFit is whether a training step fits one card and the largest micro-batch that does.
type TrainFit struct {
	GPU           GPU   `json:"gpu"`
	MemoryBytes   int64 `json:"memory_bytes"`
	UsableBytes   int64 `json:"usable_bytes"`
	Fits          bool  `json:"fits"`
	HeadroomBytes int64 `json:"headroom_bytes"`
	// MaxMicroBatch is the most sequences of SeqLen per step that fit with the margin.
	MaxMicroBatch int `json:"max_micro_batch"`
}

// loraParams counts rank-r adapters on every linear layer of every block:
// a d_in × d_out layer gets r × (d_in + d_out). Per layer q and o add
// r(h + heads·head_dim) each, k and v r(h + kv_heads·head_dim) each, gate,
// up and down r(h + intermediate) each (once per expert in a mixture).
func loraParams(m Model, r int) int64 {
	h, q, kv, i := int64(m.HiddenSize), int64(m.Heads*m.HeadDim), int64(m.KVHeads*m.HeadDim), int64(m.expertInter())
	mlp := 3 * (h + i)
	if m.MoE() {
		mlp *= int64(m.Experts)
	}
	return int64(r) * int64(m.Layers) * (2*(h+q) + 2*(h+kv) + mlp)
}

// activationBytesPerToken is what one layer saves for the backward pass
// per token, in bf16 with FlashAttention (no score matrix): the two norms'
// inputs and outputs (4 × hidden), q, k, v and the attention output
// (2 × heads·head_dim + 2 × kv_heads·head_dim), and the gated MLP's gate,
// up, activation and product (4 × intermediate, per routed expert): × 2 B.
func activationBytesPerToken(m Model) int64 {
	mlp := 4 * m.expertInter()
	if m.MoE() {
		mlp *= m.ExpertsPerToken
	}
	return 2 * int64(4*m.HiddenSize+2*m.Heads*m.HeadDim+2*m.KVHeads*m.HeadDim+mlp)
}

// CalculateTraining sizes one training step (forward and backward of a
// micro-batch, then the optimizer step) on each card.
func CalculateTraining(in TrainInputs) (TrainEstimate, error) {
	m := in.Model
	if m.Layers <= 0 || m.HiddenSize <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 {
		return TrainEstimate{}, fmt.Errorf("model %q: shape incomplete", m.Name)
	}
	if in.MicroBatch <= 0 || in.SeqLen <= 0 {
		return TrainEstimate{}, fmt.Errorf("micro-batch %d of %d tokens: want both positive", in.MicroBatch, in.SeqLen)
	}
	if in.Optimizer == "" {
		in.Optimizer = AdamW
	}
	state, err := in.Optimizer.StateBytes()
	if err != nil {
		return TrainEstimate{}, err
	}
	util, margin, err := utilAndMargin(in.Utilisation, in.Margin)
	if err != nil {
		return TrainEstimate{}, err
	}
	gpus := in.GPUs
	if gpus == nil {
		gpus = Catalog
	}
	pc := m.Params()
	e := TrainEstimate{Model: m.Name, Method: in.Method, Optimizer: in.Optimizer, MicroBatch: in.MicroBatch, SeqLen: in.SeqLen,
		Checkpointing: in.Checkpointing, Utilisation: util, Margin: margin, Params: pc.Total()}
	switch in.Method {
	case FullFineTune:
		p := pc.Total()
		e.TrainedParams = p
		e.WeightBytes = 2 * p
		e.MasterBytes = 4 * p
		e.GradientBytes = 2 * p
		e.OptimizerBytes = int64(math.Ceil(state * float64(p)))
	case LoRA, QLoRA:
		e.LoRARank = in.LoRARank
		if e.LoRARank <= 0 {
			e.LoRARank = DefaultLoRARank
		}
		a := loraParams(m, e.LoRARank)
		e.TrainedParams = a
		e.WeightBytes = 2 * pc.Total()
		if in.Method == QLoRA {
			e.WeightBytes = int64(math.Ceil(float64(pc.Linear)*nf4BytesPerParam)) + 2*pc.Other
		}
		e.AdapterBytes = 4 * a
		e.GradientBytes = 4 * a
		e.OptimizerBytes = int64(math.Ceil(state * float64(a)))
	default:
		return TrainEstimate{}, fmt.Errorf("training method %q: want full, lora or qlora", in.Method)
	}
	perSeq := e.perSequence(m)
	e.ActivationBytes, e.LogitBytes = e.activations(m, in.MicroBatch)
	e.OverheadBytes = RuntimeOverheadBytes
	fixed := e.fixed(m)
	e.TotalBytes = fixed + e.ActivationBytes + e.LogitBytes
	e.TotalWithMarginBytes = int64(math.Ceil(float64(e.TotalBytes) * (1 + margin)))
	for _, g := range gpus {
		f := TrainFit{GPU: g, MemoryBytes: g.Bytes()}
		f.UsableBytes = int64(float64(f.MemoryBytes) * util)
		f.Fits = e.TotalWithMarginBytes <= f.UsableBytes
		f.HeadroomBytes = f.UsableBytes - e.TotalWithMarginBytes
		f.MaxMicroBatch = sequencesThatFit(float64(f.UsableBytes)/(1+margin), fixed, perSeq)
		e.Fits = append(e.Fits, f)
	}
	return e, nil
}

// activations is the saved activations and the logits of b sequences.
// Without checkpointing every layer's tensors are kept; with it only each
// layer's input (hidden, bf16) plus one layer's tensors while it is
// recomputed. Logits are bf16 with an fp32 copy for the loss: 6 B per
// vocabulary entry per token.
func (e TrainEstimate) activations(m Model, b int) (act, logits int64) {
	tokens := int64(b) * int64(e.SeqLen)
	perLayer := activationBytesPerToken(m) * tokens
	if e.Checkpointing {
		act = int64(m.Layers)*tokens*int64(m.HiddenSize)*2 + perLayer
	} else {
		act = int64(m.Layers) * perLayer
	}
	return act, tokens * int64(m.VocabSize) * 6
}

// perSequence is what one more sequence in the micro-batch adds.
func (e TrainEstimate) perSequence(m Model) int64 {
	a, l := e.activations(m, 1)
	return a + l
}

// fixed is what does not grow with the micro-batch.
func (e TrainEstimate) fixed(m Model) int64 {
	return e.WeightBytes + e.MasterBytes + e.AdapterBytes + e.GradientBytes + e.OptimizerBytes + RuntimeOverheadBytes
}

// WriteText writes the training estimate with its formulas in a footnote.
func (e TrainEstimate) WriteText(w io.Writer) error {
	ew := &numfmt.Writer{W: w}
	ck := "off"
	if e.Checkpointing {
		ck = "on"
	}
	ew.Printf("Training %s: %s fine-tuning, %s, micro-batch %d × %s tokens, activation checkpointing %s\n",
		e.Model, e.Method, e.Optimizer, e.MicroBatch, numfmt.GroupDigits(int64(e.SeqLen)), ck)
	ew.Printf("%.2f billion parameters; trained: %s", float64(e.Params)/1e9, numfmt.GroupDigits(e.TrainedParams))
	if e.LoRARank > 0 {
		ew.Printf(" (rank-%d adapters on every linear layer)", e.LoRARank)
	}
	ew.Printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	base := "bf16 [1]"
	if e.Method == QLoRA {
		base = "linear layers NF4 with double quantisation, the rest bf16 [2]"
	}
	rows := []struct {
		name string
		b    int64
		why  string
	}{
		{"Weights", e.WeightBytes, base},
		{"Master weights", e.MasterBytes, "fp32 copy, 4 B a parameter [1]"},
		{"LoRA adapters", e.AdapterBytes, "fp32, 4 B an adapter parameter [3]"},
		{"Gradients", e.GradientBytes, map[bool]string{true: "bf16, 2 B a parameter [1]", false: "fp32, 4 B an adapter parameter"}[e.Method == FullFineTune]},
		{"Optimizer states", e.OptimizerBytes, map[Optimizer]string{AdamW: "two fp32 moments, 8 B [1]", Adam8bit: "two 8-bit moments, 2 B [4]", SGD: "fp32 momentum, 4 B"}[e.Optimizer] + " a trained parameter"},
		{"Activations", e.ActivationBytes, map[bool]string{false: "every layer's saved tensors [5]", true: "each layer's input + one layer recomputed [5]"}[e.Checkpointing]},
		{"Logits", e.LogitBytes, "bf16 + fp32 copy for the loss, 6 B × vocabulary × tokens"},
		{"Runtime overhead", e.OverheadBytes, "CUDA context, workspaces"},
		{"Total", e.TotalBytes, ""},
		{fmt.Sprintf("Total with %.0f%% margin", e.Margin*100), e.TotalWithMarginBytes, ""},
	}
	for _, r := range rows {
		if r.b == 0 && r.name != "Total" {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.name, Bytes(r.b), r.why)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write training estimate: %w", err)
	}
	ew.Printf("\nCards (one card, no sharding; usable = memory × %.2f):\n", e.Utilisation)
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "GPU\tmemory\tusable\tfits\theadroom\tmax micro-batch\t\n")
	for _, f := range e.Fits {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t\n", f.GPU.Name, numfmt.GiBString(f.MemoryBytes), numfmt.GiBString(f.UsableBytes), yesNo(f.Fits),
			numfmt.GiBString(f.HeadroomBytes), f.MaxMicroBatch)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write training fits: %w", err)
	}
	ew.Printf("[1] Mixed-precision AdamW: 2 (bf16 weights) + 4 (fp32 master) + 2 (gradients) + 4 + 4 (moments) = 16 B a parameter (Rajbhandari et al., ZeRO, 2020, section 3.1).\n")
	ew.Printf("[2] NF4 with double quantisation: 0.5 + 1/64 + 4/(64 × 256) = 0.5159 B a parameter, 4.127 bits (Dettmers et al., QLoRA, 2023).\n")
	ew.Printf("[3] LoRA: r × (d_in + d_out) parameters per adapted layer (Hu et al., 2021); adapters, their gradients and states in fp32.\n")
	ew.Printf("[4] 8-bit Adam: block-wise quantised moments, 1 B each; block statistics (4 B per 2,048 values) left out (Dettmers et al., 2022).\n")
	ew.Printf("[5] Per layer per token, bf16, FlashAttention (no score matrix): 2 × (4 × hidden + 2 × heads·head_dim + 2 × kv_heads·head_dim + 4 × intermediate) B; checkpointing keeps 2 × hidden per layer (Korthikanti et al., 2022, for the method).\n")
	if ew.Err != nil {
		return fmt.Errorf("write training estimate: %w", ew.Err)
	}
	return nil
}
