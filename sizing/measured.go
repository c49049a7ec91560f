package sizing

import (
	"fmt"
	"strings"
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
	Variant  string   `json:"variant"`
	Model    string   `json:"model"` // as the manifest names it
	GPU      GPUInfo  `json:"gpu"`
	Estimate Estimate `json:"estimate"` // at concurrency 1, on the run's card
}

// MemoryRow is one level: predicted figures and the peaks measured over its
// repetitions (the highest of each; nil when the run could not measure it).
type MemoryRow struct {
	Variant string `json:"variant"`
	Mode    string `json:"mode"`
	Level   int    `json:"level"`
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
// prediction beside the measured peaks. Left empty, in.Model is the preset
// the variant's model name contains and in.Weights is read from the variant
// and model names (InferPrecision); in.GPUs is replaced by the card the run
// measured when the manifest names one.
func CheckMeasured(run *RunData, in Inputs) (MemoryCheck, error) {
	mc := MemoryCheck{Dir: run.Dir, RunID: run.RunID, Simulated: run.Simulated || run.Manifest.Simulated}
	ests := map[string]Estimate{}
	for _, variant := range run.Variants() {
		vm := run.Manifest.Variant(variant)
		vin := in
		if vin.Model.Name == "" {
			p, ok := Preset(vm.Engine.Model)
			if !ok {
				return MemoryCheck{}, fmt.Errorf("variant %s: model %q matches no preset (%v): give the model's config.json",
					variant, vm.Engine.Model, PresetNames())
			}
			vin.Model = p
		}
		if in.Weights == "" {
			vin.Weights = InferPrecision(variant + " " + vm.Engine.Model)
		}
		if vm.GPU.MemoryTotalBytes > 0 {
			g, _ := FindGPU(vm.GPU.Name)
			g.Name = vm.GPU.Name
			g.MemoryBytes = vm.GPU.MemoryTotalBytes
			vin.GPUs = []GPU{g}
		}
		vin.Concurrency = 1
		e, err := Calculate(vin)
		if err != nil {
			return MemoryCheck{}, fmt.Errorf("variant %s: %w", variant, err)
		}
		ests[variant] = e
		mc.Estimates = append(mc.Estimates, VariantEst{Variant: variant, Model: vm.Engine.Model, GPU: vm.GPU, Estimate: e})
	}

	type key struct {
		variant, mode string
		level         int
	}
	rows := map[key]*MemoryRow{}
	var order []key
	for _, p := range run.Passes {
		k := key{p.Variant, p.Mode, p.Level}
		r := rows[k]
		if r == nil {
			e := ests[p.Variant]
			r = &MemoryRow{Variant: p.Variant, Mode: p.Mode, Level: p.Level, PredictedBytes: e.At(p.Level)}
			if len(e.Fits) == 1 {
				pool := e.Fits[0].UsableBytes - e.FixedBytes()
				if pool > 0 {
					r.PredictedKVShare = float64(int64(p.Level)*e.KVBytesPerSeq) / float64(pool)
				}
			}
			rows[k] = r
			order = append(order, k)
		}
		r.PeakGPUMemBytes = maxInt(r.PeakGPUMemBytes, p.PeakGPUMemBytes)
		r.PeakTorchAllocatedBytes = maxInt(r.PeakTorchAllocatedBytes, p.PeakTorchAllocatedBytes)
		r.PeakTorchReservedBytes = maxInt(r.PeakTorchReservedBytes, p.PeakTorchReservedBytes)
		if p.PeakKVUsage != nil && (r.PeakKVUsage == nil || *p.PeakKVUsage > *r.PeakKVUsage) {
			v := *p.PeakKVUsage
			r.PeakKVUsage = &v
		}
	}
	for _, k := range order {
		mc.Rows = append(mc.Rows, *rows[k])
	}
	return mc, nil
}

func maxInt(cur, v *int64) *int64 {
	if v == nil || (cur != nil && *cur >= *v) {
		return cur
	}
	x := *v
	return &x
}

// InferPrecision reads a weight precision from a variant or model name
// ("bf16", "Llama-3.1-8B-Instruct-AWQ", "w8a8", "FP8-Dynamic"), bf16 when
// the name says nothing.
func InferPrecision(name string) Precision {
	n := strings.ToLower(name)
	switch {
	case containsAny(n, "int4", "awq", "gptq", "4bit", "w4a16", "q4"):
		return INT4
	case containsAny(n, "fp8"):
		return FP8
	case containsAny(n, "int8", "w8a8", "8bit", "q8"):
		return INT8
	}
	return BF16
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
