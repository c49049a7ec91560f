// Package starter starts the built-in engine for a run: it implements
// extractbench.Starter, so that pipeline imports no engine and the engine
// imports no pipeline. cmd/extractbench wires it in as the "builtin" engine.
package starter

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin"
)

// Name is the engine.url that selects the built-in engine.
const Name = "builtin"

// Builtin starts the built-in simulated engine in-process on a free
// loopback port, one per variant.
type Builtin struct{}

// Starters returns the in-process engines this binary offers, for
// pipeline.Options.Starters.
func Starters() map[string]extractbench.Starter {
	return map[string]extractbench.Starter{Name: Builtin{}}
}

// CheckEngine checks the variant's model and engine.builtin settings
// without starting anything (extractbench.Checker): the run reports them
// before its first request.
func (Builtin) CheckEngine(v *extractbench.Variant) []error {
	var errs []error
	if _, err := profile(v); err != nil {
		field := "model"
		if _, lerr := builtin.LookupProfile(v.Engine.Model); lerr == nil {
			field = "builtin"
		}
		errs = append(errs, &extractbench.FieldError{Field: field, Err: err})
	}
	if o := v.Engine.Builtin; o != nil {
		if o.Clock != "" && o.Clock != extractbench.ClockEngine && o.Clock != extractbench.ClockWall {
			errs = append(errs, &extractbench.FieldError{Field: "builtin.clock", Err: fmt.Errorf("unknown clock %q (known: %s, %s)", o.Clock, extractbench.ClockEngine, extractbench.ClockWall)})
		}
		names := make([]string, 0, len(o.Faults))
		for name := range o.Faults {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !slices.Contains(builtin.FaultKinds, builtin.Fault(name)) {
				errs = append(errs, &extractbench.FieldError{Field: "builtin.faults." + name, Err: fmt.Errorf("unknown fault %q (known: %s)", name, faultNames())})
			}
		}
	}
	return errs
}

// StartEngine starts the engine the variant describes: the preset named by
// engine.model with the protocol's engine.builtin overrides, seeded by
// generation.seed.
func (Builtin) StartEngine(ctx context.Context, v *extractbench.Variant, gen extractbench.Generation, clock *extractbench.EngineClock) (*extractbench.InProcessEngine, error) {
	p, err := profile(v)
	if err != nil {
		return nil, fmt.Errorf("engine.model: %w", err)
	}
	_, variant := builtin.SplitVariant(v.Engine.Model)
	cfg := builtin.Config{Profile: p, Models: []string{v.Engine.Model}, Variant: variant, Version: extractbench.ToolVersion}
	if gen.Seed != nil {
		cfg.Seed = int64(*gen.Seed)
	}
	if clock != nil { // a nil *EngineClock in the interface would not be nil
		cfg.Clock = clock
	}
	if o := v.Engine.Builtin; o != nil && len(o.Faults) > 0 {
		cfg.FaultRates = map[builtin.Fault]float64{}
		for name, rate := range o.Faults {
			f := builtin.Fault(name)
			if !slices.Contains(builtin.FaultKinds, f) {
				return nil, fmt.Errorf("engine.builtin.faults: unknown fault %q (known: %s)", name, faultNames())
			}
			cfg.FaultRates[f] = rate
		}
	}
	url, stop, err := builtin.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &extractbench.InProcessEngine{
		URL: url, Stop: stop,
		Version: builtin.Name + " " + extractbench.ToolVersion,
		GPU:     extractbench.GPUInfoJSON{Name: p.GPUName, MemoryTotalBytes: p.GPUMemoryBytes, Source: "builtin-profile"},
		Profile: describe(p),
	}, nil
}

// profile is the variant's built-in engine profile: the preset named by
// engine.model, with the protocol's engine.builtin overrides.
func profile(v *extractbench.Variant) (builtin.Profile, error) {
	p, err := builtin.LookupProfile(v.Engine.Model)
	if err != nil {
		return p, err
	}
	if o := v.Engine.Builtin; o != nil {
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
		p.WarmupRequests = o.WarmupRequests
	}
	if v.Engine.ContextWindow > 0 {
		p.ContextWindow = v.Engine.ContextWindow
	}
	return p, p.Validate()
}

// describe is the simulated card and model, for the manifest.
func describe(p builtin.Profile) json.RawMessage {
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
	return raw
}

func faultNames() string {
	var n []string
	for _, f := range builtin.FaultKinds {
		n = append(n, string(f))
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}
