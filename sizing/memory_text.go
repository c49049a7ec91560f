package sizing

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/extractbench/extractbench/numfmt"
)

// WriteText writes the estimate for people: each figure with its unit and
// the arithmetic behind it, then the fits table with each card's
// compatibility for the precisions chosen.
func (e Estimate) WriteText(w io.Writer) error {
	ew := &numfmt.Writer{W: w}
	prec := string(e.Weights)
	if e.GroupSize > 0 {
		prec = fmt.Sprintf("%s, group %d with an fp16 scale and zero point", e.Weights, e.GroupSize)
	}
	if e.GGUF != "" {
		fell := ""
		if e.GGUFFallbacks > 0 {
			fell = fmt.Sprintf("; %d tensors fall back to another type: their rows are not whole blocks of the scheme's", e.GGUFFallbacks)
		}
		ew.Printf("Model %s: %.2f billion parameters as GGUF %s, tensor by tensor as llama-quantize makes them%s\n",
			e.Model, float64(e.Params)/1e9, e.GGUF, fell)
	} else {
		ew.Printf("Model %s: %.2f billion parameters (%.2f billion in linear layers at %s; embeddings, head, norms and routers in 16 bits)\n",
			e.Model, float64(e.Params)/1e9, float64(e.QuantisedParams)/1e9, prec)
	}
	if e.Shape.MoE() {
		ew.Printf("Mixture of experts: all %d experts resident; %.2f billion parameters active per token (%d of %d experts)\n",
			e.Shape.Experts, float64(e.ActiveParams)/1e9, e.Shape.ExpertsPerToken, e.Shape.Experts)
	}
	if e.TP > 1 {
		ew.Printf("Tensor parallel over %d cards: every figure below is per card\n", e.TP)
	}
	kvElem, _ := e.KV.KVBytes()
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	if e.TP > 1 {
		fmt.Fprintf(tw, "Weights\t%s = %s / %d cards\n", Bytes(e.WeightBytes), numfmt.GiBString(e.ModelWeightBytes), e.TP)
	} else {
		fmt.Fprintf(tw, "Weights\t%s\n", Bytes(e.WeightBytes))
	}
	fmt.Fprintf(tw, "KV cache per token\t%s = 2 × %d layers × %d KV heads × %d head dim × %d B (%s)\n",
		Bytes(e.KVBytesPerToken), e.Shape.Layers, e.KVHeadsPerCard, e.Shape.HeadDim, kvElem, e.KV)
	held := fmt.Sprintf("at %s tokens", numfmt.GroupDigits(int64(e.HeldTokens)))
	switch {
	case e.Cache == StaticCache:
		held = fmt.Sprintf("reserved at load for %s tokens (static cache)", numfmt.GroupDigits(int64(e.ContextTokens)))
	case e.HeldTokens != e.ContextTokens:
		held = fmt.Sprintf("at %s tokens held on average (dynamic cache; context %s)", numfmt.GroupDigits(int64(e.HeldTokens)), numfmt.GroupDigits(int64(e.ContextTokens)))
	}
	fmt.Fprintf(tw, "KV cache per sequence\t%s %s\n", Bytes(e.KVBytesPerSeq), held)
	if sl := e.Shape.SlidingLayers; e.Shape.SlidingWindow > 0 && sl > 0 {
		fmt.Fprintf(tw, "  sliding window\t= 2 × %d KV heads × %d head dim × %d B × (%d full layers × %s + %d sliding layers × min(%s, %s window))\n",
			e.KVHeadsPerCard, e.Shape.HeadDim, kvElem, e.Shape.Layers-sl, numfmt.GroupDigits(int64(e.HeldTokens)), sl,
			numfmt.GroupDigits(int64(e.HeldTokens)), numfmt.GroupDigits(int64(e.Shape.SlidingWindow)))
	}
	if e.KVOffloadShare > 0 {
		fmt.Fprintf(tw, "KV cache, %d sequence(s)\t%s on the card; %s in CPU memory (%.0f%% offloaded)\n", e.Concurrency, Bytes(e.KVBytes),
			numfmt.GiBString(e.KVCPUBytes), e.KVOffloadShare*100)
	} else {
		fmt.Fprintf(tw, "KV cache, %d sequence(s)\t%s\n", e.Concurrency, Bytes(e.KVBytes))
	}
	fmt.Fprintf(tw, "Activations\t%s (one %s-token prefill chunk + fp32 logits per sequence)\n",
		Bytes(e.ActivationBytes), numfmt.GroupDigits(DefaultPrefillTokens))
	fmt.Fprintf(tw, "Runtime overhead\t%s (CUDA context, workspaces, CUDA graphs)\n", Bytes(e.OverheadBytes))
	if e.CommBytes > 0 {
		fmt.Fprintf(tw, "Tensor-parallel buffers\t%s (one prefill chunk's hidden states for the all-reduce + %s NCCL buffers)\n",
			Bytes(e.CommBytes), numfmt.GiBString(NCCLBufferBytes))
	}
	fmt.Fprintf(tw, "After load\t%s (weights, overhead%s, KV held before any request)\n", Bytes(e.AfterLoadBytes()),
		map[bool]string{true: ", buffers", false: ""}[e.CommBytes > 0])
	fmt.Fprintf(tw, "Total\t%s\n", Bytes(e.TotalBytes))
	fmt.Fprintf(tw, "Total with %.0f%% margin\t%s\n", e.Margin*100, Bytes(e.TotalWithMarginBytes))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write estimate: %w", err)
	}
	ew.Printf("\nCards: datasheet memory is decimal (1 GB = 10^9 B), shown here in GiB (2^30 B); usable = memory × %.2f.\n", e.Utilisation)
	ew.Printf("Max concurrency: sequences of %s tokens that fit with the %.0f%% margin (and without it).\n",
		numfmt.GroupDigits(int64(e.HeldTokens)), e.Margin*100)
	if e.AdmissionReserve > 0 {
		ew.Printf("Admission reserve: the engine's scheduler admits a sequence only while %.0f%% of the KV budget is free, so the max concurrency counts what it admits, not all that would fit.\n",
			e.AdmissionReserve*100)
	}
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	offload := e.KVOffloadShare > 0
	fmt.Fprintf(tw, "GPU\tarch\tmemory\tusable\tfits %d\theadroom\tmax concurrency\tdecode ceiling at 1\t", e.Concurrency)
	if offload {
		fmt.Fprintf(tw, "offload per step\t")
	}
	fmt.Fprintf(tw, "weights %s\tKV %s\tFA2\tFA3\t\n", e.Weights, e.KV)
	var notes []string
	for _, f := range e.Fits {
		mem := numfmt.GiBString(f.MemoryBytes)
		if f.GPU.MemoryBytes == 0 {
			mem = fmt.Sprintf("%g GB = %s", f.GPU.DatasheetGB, mem)
		} else {
			mem += " (measured)"
		}
		ceiling := "–"
		if f.DecodeCeilingTokS > 0 {
			ceiling = fmt.Sprintf("%.0f tok/s", f.DecodeCeilingTokS)
		}
		name := f.GPU.Name
		if e.TP > 1 {
			name = fmt.Sprintf("%d× %s", e.TP, name)
		}
		arch := "?"
		if f.GPU.Arch != "" {
			arch = f.GPU.Arch + " " + f.GPU.ComputeCapability
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d (%d)\t%s\t", name, arch, mem, numfmt.GiBString(f.UsableBytes), yesNo(f.Fits),
			numfmt.GiBString(f.HeadroomBytes), f.MaxConcurrency, f.MaxConcurrencyNoMargin, ceiling)
		if offload {
			if f.OffloadStepMS > 0 {
				fmt.Fprintf(tw, "≥ %.1f ms\t", f.OffloadStepMS)
			} else {
				fmt.Fprintf(tw, "–\t")
			}
		}
		for _, s := range f.Support {
			fmt.Fprintf(tw, "%s\t", s.Status)
			if s.Note != "" {
				notes = appendNew(notes, fmt.Sprintf("%s %s: %s", s.Feature, s.Status, s.Note))
			}
		}
		fmt.Fprintf(tw, "\n")
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write fits: %w", err)
	}
	ew.Printf("Decode ceiling: bandwidth / weight bytes a token reads, an upper bound for one sequence (datasheet bandwidth, a lead, not a measurement).\n")
	if offload {
		ew.Printf("Offload per step: the offloaded KV crossing PCIe (datasheet, one direction) once per decode step: a floor on each step's time.\n")
	}
	ew.Printf("Compatibility by compute capability: bf16 and FlashAttention-2 need 8.0 (Ampere); fp8 8.9 (Ada, Hopper); FlashAttention-3 9.0 (Hopper); fp4 10.0 (Blackwell). Pin CUDA, driver and engine versions on the card you rent.\n")
	for _, n := range notes {
		ew.Printf("  %s\n", n)
	}
	if ew.Err != nil {
		return fmt.Errorf("write estimate: %w", ew.Err)
	}
	return nil
}

func appendNew(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
