package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/telemetry"
)

// pin records what the engine says of itself (served models, version,
// GPU) in the manifest; on resume it refuses an engine that changed.
func (e *engine) pin(ctx context.Context) error {
	rs, v := e.rs, e.v
	idx := slices.IndexFunc(rs.manifest.Variants, func(m extractbench.VariantManifest) bool { return m.Name == v.Name })
	if idx < 0 {
		return fmt.Errorf("variant %s missing from the manifest", v.Name)
	}
	vm := &rs.manifest.Variants[idx]
	info := e.client.Describe(ctx)
	e.family.learn(v, info)
	for _, m := range info.Missed {
		rs.noAnswer(ctx, v, e.replicas.all[0].name, m, "the manifest leaves out what it would have said")
	}
	if err := sameEngine(ctx, v, e, info); err != nil {
		return err
	}
	now := e.identity(ctx, vm.Engine, info)
	if vm.Environment != "" || vm.Engine.Version != "" || vm.GPU.Name != "" { // pinned by an earlier attempt of this run
		if diff := environmentDiff(*vm, now); diff != "" {
			return &ConfigError{fmt.Errorf("resume: variant %s ran in another environment (%s): results of a different engine, GPU, driver or CUDA are never mixed; use a new -out directory",
				v.Name, diff)}
		}
	}
	*vm = now
	if idx == 0 {
		rs.manifest.Engine, rs.manifest.GPU = now.Engine, now.GPU
	}
	if now.Engine.Simulated && !rs.simulated {
		rs.manifest.Simulated, rs.simulated = true, true
		if err := rs.store.SetRunSimulated(ctx, rs.runID, true); err != nil {
			return fmt.Errorf("record that the engine is simulated: %w", err)
		}
	}
	if err := rs.store.UpdateManifest(ctx, rs.runID, rs.manifest); err != nil {
		return fmt.Errorf("record the engine in the manifest: %w", err)
	}
	e.pinIdentity(ctx) // engineidentity.go
	return nil
}

// identity is the variant's manifest entry as the engine describes itself
// (info) over what the protocol said of it (declared): version, served
// models and file, and the GPU it runs on, hashed as its environment.
func (e *engine) identity(ctx context.Context, declared extractbench.EngineInfo, info client.EngineReport) extractbench.VariantManifest {
	now := extractbench.VariantManifest{Name: e.v.Name, Engine: declared}
	now.Engine.ServedModels, now.Engine.Version = info.ServedModels, info.Version
	now.Engine.VersionSource, now.Engine.About = info.VersionSource, info.About
	now.Engine.File = modelFile(info.File)
	if now.Engine.ContextWindow == 0 {
		now.Engine.ContextWindow = info.ContextWindow
	}
	// Simulated because the engine says so (client.EngineReport), whatever
	// its URL: a start: that runs `extractbench engine serve` is simulated.
	now.Engine.Simulated = info.Simulated
	switch {
	case e.inproc != nil:
		now.GPU, now.Extra, now.Engine.Version = e.inproc.GPU, e.inproc.Profile, e.inproc.Version
	case info.Simulated:
		// The card is modelled: this machine's GPU is not the engine's,
		// neither recorded nor sampled.
		now.GPU = extractbench.GPUInfoJSON{Name: info.ModelledGPU.Name, MemoryTotalBytes: info.ModelledGPU.MemoryTotalBytes, Source: "builtin-profile"}
		e.nvidiaSMI = false
	default:
		now.GPU = telemetry.EngineGPU(ctx, e.v.Engine)
	}
	now.Environment = EnvironmentHash(now)
	return now
}
