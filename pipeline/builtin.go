package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/extractbench/extractbench/engines/builtin"
)

// builtinProfile is the variant's built-in engine profile: the preset named
// by engine.model, with the protocol's engine.builtin overrides.
func builtinProfile(v *Variant) (builtin.Profile, error) {
	p, err := builtin.LookupProfile(v.Engine.Model)
	if err != nil {
		return p, err
	}
	o := v.Engine.Builtin
	if o == nil {
		return p, nil
	}
	if o.TimeScale != nil {
		p.TimeScale = *o.TimeScale
	}
	if o.OnKVFull != "" {
		p.OnKVFull = o.OnKVFull
	}
	if o.GPUMemoryGiB > 0 {
		p.GPUMemoryBytes = int64(o.GPUMemoryGiB * (1 << 30))
	}
	if o.MaxRunning > 0 {
		p.MaxRunningSeqs = o.MaxRunning
	}
	if o.ContextWindow > 0 {
		p.ContextWindow = o.ContextWindow
	}
	if v.Engine.ContextWindow > 0 {
		p.ContextWindow = v.Engine.ContextWindow
	}
	return p, p.Validate()
}

// startBuiltin starts the built-in engine in-process on a free loopback port.
func startBuiltin(ctx context.Context, v *Variant, proto *Protocol) (string, func() error, error) {
	p, err := builtinProfile(v)
	if err != nil {
		return "", nil, fmt.Errorf("engine.model: %w", err)
	}
	_, variant := builtin.SplitVariant(v.Engine.Model)
	cfg := builtin.Config{Profile: p, Models: []string{v.Engine.Model}, Variant: variant}
	if proto.Generation.Seed != nil {
		cfg.Seed = int64(*proto.Generation.Seed)
	}
	if o := v.Engine.Builtin; o != nil && len(o.Faults) > 0 {
		cfg.FaultRates = map[builtin.Fault]float64{}
		for name, rate := range o.Faults {
			f := builtin.Fault(name)
			if !slices.Contains(builtin.FaultKinds, f) {
				return "", nil, fmt.Errorf("engine.builtin.faults: unknown fault %q (known: %s)", name, faultNames())
			}
			cfg.FaultRates[f] = rate
		}
	}
	return builtin.Start(ctx, cfg)
}

// builtinGPU describes the simulated card for the manifest, with the profile.
func builtinGPU(v *Variant, _ *Protocol) (GPUInfoJSON, json.RawMessage) {
	p, err := builtinProfile(v)
	if err != nil {
		return GPUInfoJSON{Source: "unknown"}, nil
	}
	raw, _ := json.Marshal(map[string]any{
		"name": p.Name, "layers": p.Layers, "kv_heads": p.KVHeads, "head_dim": p.HeadDim, "params": p.Params,
		"dtype": p.Dtype, "weight_bytes": p.WeightBytes(), "kv_bytes_per_token": p.KVBytesPerToken(),
		"kv_pool_bytes": p.KVPoolBytes(), "kv_blocks": p.KVBlocks(), "block_size": p.BlockSize,
		"context_window": p.ContextWindow, "max_running_seqs": p.MaxRunningSeqs, "on_kv_full": p.OnKVFull,
		"prefill_tokens_per_s": p.PrefillTokensPerSec, "decode_step_base_ns": p.DecodeStepBase.Nanoseconds(),
		"decode_step_per_seq_ns": p.DecodeStepPerSeq.Nanoseconds(), "time_scale": p.TimeScale,
		"gpu_memory_bytes": p.GPUMemoryBytes, "memory_utilization": p.MemoryUtilization,
		"note": "simulated: modelled durations are multiplied by time_scale",
	})
	return GPUInfoJSON{Name: p.GPUName, MemoryTotalBytes: p.GPUMemoryBytes, Source: "builtin-profile"}, raw
}

func faultNames() string {
	var n []string
	for _, f := range builtin.FaultKinds {
		n = append(n, string(f))
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}
