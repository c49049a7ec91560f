package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/sizing"
)

type memoryCommand struct{ env }

func (c *memoryCommand) Synopsis() string {
	return "pre-rental memory calculator: weights, KV cache, and which cards fit at what concurrency"
}

func (c *memoryCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("memory [flags] [RESULTS_DIR]", c.Synopsis()+"\n\nWith RESULTS_DIR, the prediction is put beside the run's measured peaks.", c.env)
	model := fs.String("model", "Llama-3.1-8B", "a preset ("+strings.Join(sizing.PresetNames(), ", ")+"), a config.json, a model directory or a GGUF file (default with RESULTS_DIR: the run's, from its manifest)")
	gguf := fs.String("gguf", "", "size the weights as llama.cpp's GGUF scheme, tensor by tensor: bf16 | f16 | q8_0 | q6_k | q4_k_m | q4_0 (default: a GGUF -model's own; with RESULTS_DIR each variant's served file's)")
	weights := fs.String("weights", "bf16", "weight precision: bf16 | fp16 | fp8 | int8 | int4 | fp4")
	group := fs.Int("group", sizing.DefaultGroupSize, "int4 quantisation group size")
	kv := fs.String("kv", "bf16", "KV-cache precision: bf16 | fp16 | fp8")
	context_ := fs.Int("context", 8192, "tokens per sequence (prompt + output, the longest expected)")
	conc := fs.Int("concurrency", 1, "sequences held at once")
	util := fs.Float64("utilisation", sizing.DefaultUtilisation, "share of a card's memory the engine may use")
	margin := fs.Float64("margin", sizing.DefaultMargin, "margin on top of the estimate (0.10 = 10%)")
	cache := fs.String("cache", "dynamic", "KV cache: dynamic (paged, grows with the tokens held) | static (every slot reserved at load)")
	mean := fs.Int("mean-tokens", 0, "dynamic cache: tokens a sequence holds on average (0 = -context, the worst case)")
	offload := fs.Float64("kv-offload", 0, "share of the KV cache kept in CPU memory (0 to below 1)")
	reserve := fs.Float64("admission-reserve", 0, fmt.Sprintf("share of the KV budget the engine's scheduler keeps from new sequences (transformers' FIFO scheduler: %g; vLLM, llama.cpp: 0)", sizing.TransformersFIFOReserve))
	tp := fs.Int("tp", 1, "tensor-parallel cards per replica: figures are per card")
	train := fs.String("train", "", "size a training step instead: full | lora | qlora (-context is the sequence length)")
	micro := fs.Int("micro-batch", 1, "-train: sequences per forward/backward")
	optim := fs.String("optimizer", "adamw", "-train: adamw | adam8bit | sgd (with momentum)")
	ckpt := fs.Bool("checkpointing", false, "-train: activation checkpointing (keep each layer's input, recompute the rest)")
	rank := fs.Int("lora-rank", sizing.DefaultLoRARank, "-train lora|qlora: adapter rank on every linear layer")
	gpus := fs.String("gpus", "", "comma-separated cards (default: the catalog); NAME, or NAME=GB (datasheet decimal gigabytes)")
	asJSON := fs.Bool("json", false, "machine-readable output")
	if err := parseFlags(fs, reorder(boolFlagsWithValue(args, "checkpointing"))); err != nil {
		return err
	}
	// With a results directory, the model is the run's unless -model names one.
	var run *results.RunData
	if fs.NArg() == 1 && *train == "" {
		var err error
		if run, err = results.LoadRun(ctx, fs.Arg(0)); err != nil {
			return readError("memory", err)
		}
		if !flagSet(fs, "model") {
			if *model, err = runModel(run); err != nil {
				return &usageError{msg: "memory: " + err.Error()}
			}
		}
	}
	m, err := sizing.ResolveModel(*model)
	if err != nil {
		return &usageError{msg: "memory: -model: " + err.Error()}
	}
	in := sizing.Inputs{Model: m, Weights: sizing.Precision(*weights), GroupSize: *group, KV: sizing.Precision(*kv),
		ContextTokens: *context_, Concurrency: *conc, Utilisation: *util, Margin: *margin,
		Cache: sizing.Cache(*cache), MeanTokens: *mean, KVOffload: *offload, AdmissionReserve: *reserve, TP: *tp, GGUF: *gguf}
	// A GGUF file is read whole (its header): the calculator's tensors are
	// set beside the file's, and the estimate sizes its scheme.
	var check *sizing.GGUFCheck
	if sizing.IsGGUF(*model) {
		g, err := sizing.OpenGGUF(*model)
		if err != nil {
			return &usageError{msg: "memory: -model: " + err.Error()}
		}
		c, err := sizing.CheckGGUF(g, *gguf)
		if err != nil {
			return &usageError{msg: "memory: -model: " + err.Error()}
		}
		check = &c
		if fs.NArg() == 0 {
			in.GGUF = c.Scheme
		}
		if !flagSet(fs, "weights") {
			in.Weights = ""
		}
	}
	if *gpus != "" {
		for _, g := range strings.Split(*gpus, ",") {
			gpu, err := sizing.ParseGPU(strings.TrimSpace(g))
			if err != nil {
				return &usageError{msg: "memory: -gpus: " + err.Error()}
			}
			in.GPUs = append(in.GPUs, gpu)
		}
	}
	if *train != "" {
		if fs.NArg() > 0 {
			return &usageError{msg: "memory: -train sizes a model before any run: give no results directory"}
		}
		te, err := sizing.CalculateTraining(sizing.TrainInputs{Model: m, Method: sizing.TrainMethod(*train), Optimizer: sizing.Optimizer(*optim),
			MicroBatch: *micro, SeqLen: *context_, Checkpointing: *ckpt, LoRARank: *rank, Utilisation: *util, Margin: *margin, GPUs: in.GPUs})
		if err != nil {
			return &usageError{msg: "memory: " + err.Error()}
		}
		if *asJSON {
			return numfmt.WriteJSON(c.stdout, te)
		}
		return te.WriteText(c.stdout)
	}
	if fs.NArg() == 1 {
		// Each variant is predicted with its own weight precision unless
		// -weights was given explicitly.
		if !flagSet(fs, "weights") {
			in.Weights = ""
		}
		mc, err := plan.CheckMeasured(run, in)
		if err != nil {
			return &usageError{msg: "memory: " + err.Error()}
		}
		if *asJSON {
			return numfmt.WriteJSON(c.stdout, mc)
		}
		return mc.WriteText(c.stdout)
	}
	if fs.NArg() > 1 {
		return &usageError{msg: "memory: at most one results directory"}
	}
	est, err := sizing.Calculate(in)
	if err != nil {
		return &usageError{msg: "memory: " + err.Error()}
	}
	if *asJSON {
		if check != nil {
			return numfmt.WriteJSON(c.stdout, struct {
				GGUF     *sizing.GGUFCheck `json:"gguf"`
				Estimate sizing.Estimate   `json:"estimate"`
			}{check, est})
		}
		return numfmt.WriteJSON(c.stdout, est)
	}
	if check != nil {
		if err := check.WriteText(c.stdout); err != nil {
			return err
		}
	}
	if err := est.WriteText(c.stdout); err != nil {
		return fmt.Errorf("write estimate: %w", err)
	}
	return nil
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// boolFlagsWithValue writes the named boolean flags as -name=true, so that
// reorder does not take the next argument for their value.
func boolFlagsWithValue(args []string, names ...string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		for _, n := range names {
			if a == "-"+n || a == "--"+n {
				out[i] = a + "=true"
			}
		}
	}
	return out
}
