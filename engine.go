package extractbench

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"time"
)

// ToolVersion is extractbench's version; ScorerVersion changes whenever a
// scoring or classification rule changes, so that results scored under
// different rules never share a fingerprint.
const (
	ToolVersion   = "0.1.0"
	ScorerVersion = "1"
)

// Variant is one engine configuration to measure.
type Variant struct {
	Name   string `json:"name"`
	Engine Engine `json:"engine"`
}

// Engine says how to reach (and optionally start) an engine.
type Engine struct {
	URL string `json:"url,omitempty"`
	// URLs are replicas of one engine (engine.urls): each request goes to
	// the least-loaded one. Exactly one of URL and URLs is set.
	URLs []string `json:"urls,omitempty"`
	// Replicas is how many built-in engines a url: builtin variant runs
	// in-process as its replicas (0 or 1: one).
	Replicas      int             `json:"replicas,omitempty"`
	Model         string          `json:"model"`
	Revision      string          `json:"revision,omitempty"`
	Kind          string          `json:"kind,omitempty"`
	APIKeyEnv     string          `json:"api_key_env,omitempty"`
	Start         string          `json:"start,omitempty"`
	Stop          string          `json:"stop,omitempty"`  // run at the end and on interruption, for engines that daemonise
	Local         *bool           `json:"local,omitempty"` // the engine runs on this machine (nil: started, or a loopback URL)
	ReadyTimeout  Duration        `json:"ready_timeout"`
	MetricsURL    string          `json:"metrics_url,omitempty"`
	GPU           string          `json:"gpu,omitempty"`
	ContextWindow int             `json:"context_window,omitempty"`
	Weights       string          `json:"weights,omitempty"`      // weight precision (bf16, fp8, int8, int4): memory predicts with it
	Quantization  string          `json:"quantization,omitempty"` // the quantisation scheme, named in the manifest and report
	Params        int64           `json:"params,omitempty"`       // the model's parameter count: the report's MFU estimate uses it
	RandomWeights bool            `json:"random_weights,omitempty"`
	Tokenizer     string          `json:"tokenizer,omitempty"`
	ChatTemplate  string          `json:"chat_template,omitempty"`
	Builtin       *BuiltinOptions `json:"builtin,omitempty"`
}

// BuiltinOptions override the built-in engine's profile.
type BuiltinOptions struct {
	TimeScale     *float64           `json:"time_scale,omitempty"`
	OnKVFull      string             `json:"on_kv_full,omitempty"`
	GPUMemoryGiB  float64            `json:"gpu_memory_gib,omitempty"`
	MaxRunning    int                `json:"max_running,omitempty"`
	ContextWindow int                `json:"context_window,omitempty"`
	Faults        map[string]float64 `json:"faults,omitempty"`
	// WarmupRequests makes the engine warm: slower until it has finished
	// that many requests (builtin.Profile.WarmupRequests).
	WarmupRequests int `json:"warmup_requests,omitempty"`
	// Clock is the clock a run against the engine measures on: ClockEngine
	// (the default) or ClockWall (Clock.WithEngineClock says why).
	Clock string `json:"clock,omitempty"`
}

// The clocks of BuiltinOptions.Clock.
const (
	// ClockEngine measures on the simulation's own clock: the figures and
	// every decision built on them do not depend on the host.
	ClockEngine = "engine"
	// ClockWall measures on the wall clock, as for a real engine: the
	// host's load and the client's own delays show in the figures (what a
	// test of the client-bound check needs).
	ClockWall = "wall"
)

// IsBuiltin reports whether the variant runs on the in-process built-in engine.
func (e Engine) IsBuiltin() bool { return e.URL == "builtin" && len(e.URLs) == 0 }

// Endpoints are the URLs the variant's requests go to, as the protocol
// writes them: engine.urls, or the one engine.url.
func (e Engine) Endpoints() []string {
	if len(e.URLs) > 0 {
		return e.URLs
	}
	return []string{e.URL}
}

// Duration is a time.Duration written as "120s" in a protocol.
type Duration time.Duration

// MarshalJSON writes the duration as Go's string form.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "120s" (the schema has checked the form already).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Starter starts an engine inside the extractbench process for the
// variants whose engine.url names it ("builtin": the simulated engine).
// The root defines the contract, so that pipeline imports no engine and no
// engine imports pipeline: implementations live beside their engine
// (engines/builtin/starter) and cmd/extractbench wires them in through
// pipeline.Options.Starters.
type Starter interface {
	// StartEngine starts v's engine, listening on a loopback port, and
	// returns once it answers. ctx bounds the engine's life: it stops when
	// ctx is done or when Stop is called. An error is a problem with the
	// variant's settings (an unknown model or option): Run reports it as a
	// ConfigError. clock, when not nil, is the run's engine clock
	// (Clock.WithEngineClock): a simulated engine runs its modelled time on
	// it and stamps every answer's instants with it (engineclock.go).
	StartEngine(ctx context.Context, v *Variant, gen Generation, clock *EngineClock) (*InProcessEngine, error)
}

// InProcessEngine is an engine a Starter started.
type InProcessEngine struct {
	URL     string          // base URL, without /v1
	Stop    func() error    // stops the engine and waits for it
	Version string          // the engine's version, as the manifest records it
	GPU     GPUInfoJSON     // the card it runs on or models
	Profile json.RawMessage // its settings, kept in the manifest as builtin_profile; nil for none
}

// Checker is what a Starter may also implement: a check of a
// variant's settings without starting anything, so that an unknown model or
// option is reported before the first request of the run, with every other
// problem, instead of when the variant's turn comes.
// Each problem may be a *FieldError naming the engine key at fault.
type Checker interface {
	CheckEngine(v *Variant) []error
}

// FieldError is a problem with one key of a variant's engine ("model",
// "builtin.faults"), so that the message can give its line.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "engine." + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// IsLocal reports whether the engine runs on this machine, so that
// nvidia-smi here describes its GPU: the protocol's engine.local when set,
// else true for an engine extractbench starts or one on a loopback address
// (every replica on one, for engine.urls).
func (e Engine) IsLocal() bool {
	if e.Local != nil {
		return *e.Local
	}
	if e.Start != "" {
		return true
	}
	for _, raw := range e.Endpoints() {
		if !IsLoopback(raw) {
			return false
		}
	}
	return true
}

// IsLoopback reports whether the URL raw names this machine: localhost or
// a loopback address.
func IsLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
