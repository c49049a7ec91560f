package plan

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/sizing"
)

// MemoryCheck puts the calculator's prediction for a run's model and card
// beside the peaks the run measured (passes.peak_* columns), one row per
// variant and level.
type MemoryCheck struct {
	Dir       string       `json:"dir"`
	RunID     string       `json:"run_id"`
	Simulated bool         `json:"simulated"`
	Rows      []MemoryRow  `json:"rows"`
	Estimates []VariantEst `json:"estimates"`
}

// VariantEst is the estimate a variant's rows were predicted with.
type VariantEst struct {
	Variant  string                   `json:"variant"`
	Model    string                   `json:"model"` // as the manifest names it
	GPU      extractbench.GPUInfoJSON `json:"gpu"`
	Estimate sizing.Estimate          `json:"estimate"` // at concurrency 1, on the run's card
	// File is what the engine said of the weights file it served
	// (llama.cpp's /v1/models meta: its type and tensor bytes), nil when it
	// said nothing; with a GGUF scheme Estimate's weights are that scheme's
	// tensors, so the two are the calculator against the file.
	File *extractbench.ModelFile `json:"file,omitempty"`
	// GGUF is the served file read where it still is (the path llama.cpp's
	// /props gave), tensor by tensor against the calculator; nil when the
	// file is not there.
	GGUF *sizing.GGUFCheck `json:"gguf,omitempty"`
}

// MemoryRow is one level: predicted figures and the peaks measured over its
// repetitions (the highest of each; nil when the run could not measure it).
type MemoryRow struct {
	Variant string            `json:"variant"`
	Mode    extractbench.Mode `json:"mode"`
	Level   int               `json:"level"`
	// PredictedBytes is weights + level × KV per sequence + buffers, without
	// the margin: what the card should show if every sequence were full.
	PredictedBytes int64 `json:"predicted_bytes"`
	// PredictedKVShare is level × KV per sequence over the KV pool an
	// engine that reserves memory × utilisation would have; above 1 it
	// would preempt or fail.
	PredictedKVShare        float64  `json:"predicted_kv_share"`
	PeakGPUMemBytes         *int64   `json:"peak_gpu_mem_bytes"`
	PeakTorchAllocatedBytes *int64   `json:"peak_torch_allocated_bytes"`
	PeakTorchReservedBytes  *int64   `json:"peak_torch_reserved_bytes"`
	PeakKVUsage             *float64 `json:"peak_kv_usage"`
}

// CheckMeasured predicts each variant of a run with in and sets the
// prediction beside the peaks measured at each level (the highest over its
// complete repetitions, eval's rule). Left empty, in.Model is the preset the
// variant's model name contains; in.Weights is each variant's own weight
// precision (VariantPrecision) unless set; in.GPUs is replaced by the card
// the run measured when the manifest names one.
func CheckMeasured(run *results.RunData, in sizing.Inputs) (MemoryCheck, error) {
	if len(run.Series()) == 0 {
		return MemoryCheck{}, results.Refused("run %s in %s has no complete pass: no measured peak to set beside the prediction (without the directory, memory predicts alone)", run.Run.RunID, run.Dir)
	}
	mc := MemoryCheck{Dir: run.Dir, RunID: run.Run.RunID, Simulated: run.Simulated()}
	ests := map[string]sizing.Estimate{}
	for _, variant := range run.VariantNames() {
		vm := run.Manifest.Variant(variant)
		vin := in
		served := servedGGUF(vm)
		if vin.GGUF == "" && vm.Engine.File != nil {
			vin.GGUF, _ = sizing.GGUFSchemeOf(vm.Engine.File.Format)
		}
		if vin.Model.Name == "" && served != nil {
			vin.Model = served.Model
		}
		if vin.Model.Name == "" {
			p, ok := sizing.Preset(vm.Engine.Model)
			if !ok {
				return MemoryCheck{}, fmt.Errorf("variant %s: model %q matches no preset (%v): give the model's config.json",
					variant, vm.Engine.Model, sizing.PresetNames())
			}
			vin.Model = p
		}
		if in.Weights == "" {
			vin.Weights = sizing.VariantPrecision(vm)
		}
		if vm.GPU.MemoryTotalBytes > 0 {
			g, _ := sizing.FindGPU(vm.GPU.Name)
			g.Name = vm.GPU.Name
			g.MemoryBytes = vm.GPU.MemoryTotalBytes
			vin.GPUs = []sizing.GPU{g}
		}
		vin.Concurrency = 1
		e, err := sizing.Calculate(vin)
		if err != nil {
			return MemoryCheck{}, fmt.Errorf("variant %s: %w", variant, err)
		}
		ests[variant] = e
		ve := VariantEst{Variant: variant, Model: vm.Engine.Model, GPU: vm.GPU, Estimate: e, File: vm.Engine.File}
		if served != nil && vin.GGUF != "" {
			if c, err := sizing.CheckGGUF(served, vin.GGUF); err == nil {
				ve.GGUF = &c
			}
		}
		mc.Estimates = append(mc.Estimates, ve)
	}
	for _, s := range run.Series() {
		e := ests[s.Variant]
		for _, l := range s.Levels {
			r := MemoryRow{Variant: s.Variant, Mode: s.Mode, Level: l.Level, PredictedBytes: e.At(l.Level),
				PeakGPUMemBytes: l.PeakGPUMemBytes, PeakTorchAllocatedBytes: l.PeakTorchAllocatedBytes,
				PeakTorchReservedBytes: l.PeakTorchReservedBytes, PeakKVUsage: l.PeakKVUsage}
			if len(e.Fits) == 1 {
				if pool := e.Fits[0].UsableBytes - e.FixedBytes(); pool > 0 {
					r.PredictedKVShare = float64(int64(l.Level)*e.KVBytesPerSeq) / float64(pool)
				}
			}
			mc.Rows = append(mc.Rows, r)
		}
	}
	return mc, nil
}

// servedGGUF reads the GGUF file a llama.cpp variant served, from the path
// its /props answer gave (model_path, kept in the manifest's about), or nil
// when the engine gave none or the file is no longer there.
func servedGGUF(vm extractbench.VariantManifest) *sizing.GGUFFile {
	var props struct {
		ModelPath string `json:"model_path"`
	}
	if len(vm.Engine.About) == 0 || json.Unmarshal(vm.Engine.About, &props) != nil || props.ModelPath == "" {
		return nil
	}
	if _, err := os.Stat(props.ModelPath); err != nil || !sizing.IsGGUF(props.ModelPath) {
		return nil
	}
	g, err := sizing.OpenGGUF(props.ModelPath)
	if err != nil {
		return nil
	}
	return g
}
