package plan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/sizing"
)

// WriteText writes the prediction beside the measured peaks.
func (mc MemoryCheck) WriteText(w io.Writer) error {
	ew := &numfmt.Writer{W: w}
	if mc.Simulated {
		ew.Printf("SIMULATED RUN: the measured peaks come from the built-in engine's model, not a GPU.\n")
	}
	ew.Printf("Run %s in %s: prediction beside measured peaks (GiB = 2^30 B; peaks are the highest over repetitions).\n", mc.RunID, mc.Dir)
	for _, v := range mc.Estimates {
		gpu := v.GPU.Name
		if gpu == "" {
			gpu = "unknown card"
		}
		mem := "datasheet catalog"
		if len(v.Estimate.Fits) == 1 {
			mem = sizing.Bytes(v.Estimate.Fits[0].MemoryBytes)
		}
		ew.Printf("  %s: %s as %s, %s weights %s, KV %s per token, %s per sequence at %s tokens; card %s, %s\n",
			v.Variant, v.Model, v.Estimate.Model, v.Estimate.Weights, numfmt.GiBString(v.Estimate.WeightBytes),
			numfmt.GiBString(v.Estimate.KVBytesPerToken), numfmt.GiBString(v.Estimate.KVBytesPerSeq),
			numfmt.GroupDigits(int64(v.Estimate.ContextTokens)), gpu, mem)
		if v.Estimate.GGUF != "" && v.File != nil && v.File.Bytes > 0 {
			ew.Printf("    weights as GGUF %s: calculator %s B, the engine's file (%s) %s B (%s)\n", v.Estimate.GGUF,
				numfmt.GroupDigits(v.Estimate.ModelWeightBytes), v.File.Format, numfmt.GroupDigits(v.File.Bytes),
				diffWords(v.Estimate.ModelWeightBytes, v.File.Bytes))
		}
		if v.GGUF != nil {
			ew.Printf("    served file %s read: tensor bytes %s, %d tensors differ from the calculator's\n", v.GGUF.Path,
				numfmt.GroupDigits(v.GGUF.FileTensorBytes), len(v.GGUF.Differences))
		}
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "variant\tlevel\tpredicted\tpred. KV use\tdevice peak\ttorch allocated\ttorch reserved\tKV usage\t\n")
	for _, r := range mc.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f%%\t%s\t%s\t%s\t%s\t\n", r.Variant, r.Level, numfmt.GiBString(r.PredictedBytes),
			r.PredictedKVShare*100, optBytes(r.PeakGPUMemBytes), optBytes(r.PeakTorchAllocatedBytes),
			optBytes(r.PeakTorchReservedBytes), optPct(r.PeakKVUsage))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write memory check: %w", err)
	}
	ew.Printf("%s\n", strings.Join([]string{
		"Predicted assumes every sequence holds the full context; engines that reserve memory up front",
		"(vLLM) show a device peak near memory × utilisation whatever the level: read torch allocated and KV usage.",
	}, " "))
	if ew.Err != nil {
		return fmt.Errorf("write memory check: %w", ew.Err)
	}
	return nil
}

func optBytes(v *int64) string {
	if v == nil {
		return "n/a"
	}
	return numfmt.GiBString(*v)
}

func optPct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", *v*100)
}

// diffWords says how far a prediction is from a measured byte count.
func diffWords(predicted, measured int64) string {
	if predicted == measured {
		return "the same"
	}
	return fmt.Sprintf("%+d B, %+.2f%%", predicted-measured, 100*float64(predicted-measured)/float64(measured))
}
