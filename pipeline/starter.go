package pipeline

import (
	"context"
	"encoding/json"
)

// EngineStarter starts an engine inside the extractbench process for the
// variants whose engine.url names it ("builtin": the simulated engine).
// pipeline defines the contract and imports no engine: implementations live
// beside their engine (engines/builtin/starter) and cmd/extractbench wires
// them in through Options.Starters.
type EngineStarter interface {
	// StartEngine starts v's engine, listening on a loopback port, and
	// returns once it answers. ctx bounds the engine's life: it stops when
	// ctx is done or when Stop is called. An error is a problem with the
	// variant's settings (an unknown model or option): Run reports it as a
	// ConfigError.
	StartEngine(ctx context.Context, v *Variant, proto *Protocol) (*InProcessEngine, error)
}

// InProcessEngine is an engine an EngineStarter started.
type InProcessEngine struct {
	URL     string          // base URL, without /v1
	Stop    func() error    // stops the engine and waits for it
	Version string          // the engine's version, as the manifest records it
	GPU     GPUInfoJSON     // the card it runs on or models
	Profile json.RawMessage // its settings, kept in the manifest as builtin_profile; nil for none
}
