package sizing

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes v as indented JSON: the machine-readable form of every
// answer in this package.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// errWriter keeps the first write error so that text writers can print
// line after line and check once.
type errWriter struct {
	w   io.Writer
	err error
}

// Write passes p on until the first error, which it then keeps returning.
func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	var n int
	n, e.err = e.w.Write(p)
	return n, e.err
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// WriteText writes the estimate for people: each figure with its unit and
// the arithmetic behind it, then the fits table.
func (e Estimate) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	prec := string(e.Weights)
	if e.GroupSize > 0 {
		prec = fmt.Sprintf("%s, group %d with an fp16 scale and zero point", e.Weights, e.GroupSize)
	}
	ew.printf("Model %s: %.2f billion parameters (%.2f billion in linear layers at %s; embeddings, head and norms in 16 bits)\n",
		e.Model, float64(e.Params)/1e9, float64(e.QuantisedParams)/1e9, prec)
	kvElem, _ := e.KV.KVBytes()
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Weights\t%s\n", Bytes(e.WeightBytes))
	fmt.Fprintf(tw, "KV cache per token\t%s = 2 × %d layers × %d KV heads × %d head dim × %d B (%s)\n",
		Bytes(e.KVBytesPerToken), e.Shape.Layers, e.Shape.KVHeads, e.Shape.HeadDim, kvElem, e.KV)
	fmt.Fprintf(tw, "KV cache per sequence\t%s at %s tokens\n", Bytes(e.KVBytesPerSeq), GroupDigits(int64(e.ContextTokens)))
	fmt.Fprintf(tw, "KV cache, %d sequence(s)\t%s\n", e.Concurrency, Bytes(e.KVBytes))
	fmt.Fprintf(tw, "Activations\t%s (one %s-token prefill chunk + fp32 logits per sequence)\n",
		Bytes(e.ActivationBytes), GroupDigits(DefaultPrefillTokens))
	fmt.Fprintf(tw, "Runtime overhead\t%s (CUDA context, workspaces, CUDA graphs)\n", Bytes(e.OverheadBytes))
	fmt.Fprintf(tw, "Total\t%s\n", Bytes(e.TotalBytes))
	fmt.Fprintf(tw, "Total with %.0f%% margin\t%s\n", e.Margin*100, Bytes(e.TotalWithMarginBytes))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write estimate: %w", err)
	}
	ew.printf("\nCards: datasheet memory is decimal (1 GB = 10^9 B), shown here in GiB (2^30 B); usable = memory × %.2f.\n", e.Utilisation)
	ew.printf("Max concurrency: sequences of %s tokens that fit with the %.0f%% margin (and without it).\n",
		GroupDigits(int64(e.ContextTokens)), e.Margin*100)
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "GPU\tmemory\tusable\tfits %d\theadroom\tmax concurrency\tdecode ceiling at 1\t\n", e.Concurrency)
	for _, f := range e.Fits {
		mem := GiBString(f.MemoryBytes)
		if f.GPU.MemoryBytes == 0 {
			mem = fmt.Sprintf("%g GB = %s", f.GPU.DatasheetGB, mem)
		} else {
			mem += " (measured)"
		}
		ceiling := "–"
		if f.DecodeCeilingTokS > 0 {
			ceiling = fmt.Sprintf("%.0f tok/s", f.DecodeCeilingTokS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d (%d)\t%s\t\n", f.GPU.Name, mem, GiBString(f.UsableBytes), yesNo(f.Fits),
			GiBString(f.HeadroomBytes), f.MaxConcurrency, f.MaxConcurrencyNoMargin, ceiling)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write fits: %w", err)
	}
	ew.printf("Decode ceiling: bandwidth / weight bytes, an upper bound for one sequence (datasheet bandwidth, a lead, not a measurement).\n")
	if ew.err != nil {
		return fmt.Errorf("write estimate: %w", ew.err)
	}
	return nil
}

// WriteText writes the prediction beside the measured peaks.
func (mc MemoryCheck) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	if mc.Simulated {
		ew.printf("SIMULATED RUN: the measured peaks come from the built-in engine's model, not a GPU.\n")
	}
	ew.printf("Run %s in %s: prediction beside measured peaks (GiB = 2^30 B; peaks are the highest over repetitions).\n", mc.RunID, mc.Dir)
	for _, v := range mc.Estimates {
		gpu := v.GPU.Name
		if gpu == "" {
			gpu = "unknown card"
		}
		mem := "datasheet catalog"
		if len(v.Estimate.Fits) == 1 {
			mem = Bytes(v.Estimate.Fits[0].MemoryBytes)
		}
		ew.printf("  %s: %s as %s, %s weights %s, KV %s per token, %s per sequence at %s tokens; card %s, %s\n",
			v.Variant, v.Model, v.Estimate.Model, v.Estimate.Weights, GiBString(v.Estimate.WeightBytes),
			GiBString(v.Estimate.KVBytesPerToken), GiBString(v.Estimate.KVBytesPerSeq),
			GroupDigits(int64(v.Estimate.ContextTokens)), gpu, mem)
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "variant\tlevel\tpredicted\tpred. KV use\tdevice peak\ttorch allocated\ttorch reserved\tKV usage\t\n")
	for _, r := range mc.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f%%\t%s\t%s\t%s\t%s\t\n", r.Variant, r.Level, GiBString(r.PredictedBytes),
			r.PredictedKVShare*100, optBytes(r.PeakGPUMemBytes), optBytes(r.PeakTorchAllocatedBytes),
			optBytes(r.PeakTorchReservedBytes), optPct(r.PeakKVUsage))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write memory check: %w", err)
	}
	ew.printf("%s\n", strings.Join([]string{
		"Predicted assumes every sequence holds the full context; engines that reserve memory up front",
		"(vLLM) show a device peak near memory × utilisation whatever the level: read torch allocated and KV usage.",
	}, " "))
	if ew.err != nil {
		return fmt.Errorf("write memory check: %w", ew.err)
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func optBytes(v *int64) string {
	if v == nil {
		return "n/a"
	}
	return GiBString(*v)
}

func optPct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", *v*100)
}
