// Package builtin is extractbench's built-in engine: an OpenAI-compatible
// HTTP server that models one model on one GPU (weights, a paged KV cache,
// continuous batching, preemption) and answers extraction prompts with a
// deterministic rule-based extractor that really reads the document. It lets
// the main job run anywhere, without a GPU or a network, and lets other
// tools (curl, vLLM's benchmark, GuideLLM) be pointed at it.
//
// Everything it models is a stand-in, not a measurement: its figures exist
// so that the pipeline's phases, sweeps, failure classes and reports can be
// exercised end to end and reproduced bit for bit.
package builtin

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Modelled hardware figures, close to a real NVIDIA L4 (24 GB, 300 GB/s)
// running an 8B model in vLLM: prefill runs at a few thousand tokens a second
// and one decode step costs ~25 ms plus a little per running sequence, because
// decoding is bound by reading the weights once per step.
const (
	// DefaultPrefillTokensPerSec is the modelled prompt processing rate.
	DefaultPrefillTokensPerSec = 5000.0
	// DefaultDecodeStepBase is the modelled cost of one decode step with one sequence.
	DefaultDecodeStepBase = 25 * time.Millisecond
	// DefaultDecodeStepPerSeq is what each additional running sequence adds to a step.
	DefaultDecodeStepPerSeq = 300 * time.Microsecond
	// DefaultTimeScale shrinks every modelled duration so that the default
	// protocol (300 documents, baseline plus levels 1..64 × 3 repetitions,
	// two variants) takes well under a minute of engine time.
	DefaultTimeScale = 0.01
	// DefaultContextWindow is the model's maximum context length in tokens.
	DefaultContextWindow = 8192
	// DefaultBlockSize is the number of tokens in one KV-cache block (vLLM's default).
	DefaultBlockSize = 16
	// DefaultMemoryUtilization is the fraction of GPU memory the engine may use (vLLM's default).
	DefaultMemoryUtilization = 0.90
	// DefaultMaxRunningSeqs caps the sequences decoded together (vLLM's max_num_seqs on small cards).
	DefaultMaxRunningSeqs = 128
	// L4MemoryBytes is the memory an L4 reports: 23,034 MiB.
	L4MemoryBytes = 23034 << 20
	// activationBytes is what the engine keeps aside for activations and
	// CUDA graphs before sizing the KV pool (vLLM profiles it; ~1 GiB for 8B).
	activationBytes = 1 << 30
)

// What to do when the KV cache has no free block, Profile.OnKVFull.
const (
	// OnKVFullQueue reserves blocks for the whole answer at admission, so new
	// requests wait and running ones never run out (a static reservation).
	OnKVFullQueue = "queue"
	// OnKVFullPreempt grows sequences block by block and, when none is free,
	// preempts the most recently admitted one, which is recomputed later (vLLM).
	OnKVFullPreempt = "preempt"
	// OnKVFullFail grows sequences block by block and fails the sequence that
	// needs a block with a 503 out-of-memory error when none is free.
	OnKVFullFail = "fail"
)

// Profile describes the model and the GPU the engine models.
type Profile struct {
	Name                string  // served model name of the preset, e.g. "sim-8b"
	Layers              int     // transformer layers
	KVHeads             int     // key/value heads (grouped-query attention)
	HeadDim             int     // dimension of one head
	Params              float64 // parameter count
	Dtype               string  // weight format: "bf16", "int8" or "int4"
	WeightBytesPerParam float64 // 2 for bf16, ~1.03 for int8, ~0.56 for int4 (scales included)
	KVBytesPerElement   float64 // 2: the KV cache stays bf16 whatever the weights are

	GPUName           string  // e.g. "NVIDIA L4 (simulated)"
	GPUMemoryBytes    int64   // total device memory
	MemoryUtilization float64 // fraction the engine may use (0-1)

	ContextWindow  int    // maximum prompt + completion tokens
	MaxRunningSeqs int    // sequences decoded together at most
	BlockSize      int    // tokens per KV block
	OnKVFull       string // OnKVFullQueue, OnKVFullPreempt or OnKVFullFail

	PrefillTokensPerSec float64       // modelled prompt processing rate
	DecodeStepBase      time.Duration // modelled decode step with one sequence
	DecodeStepPerSeq    time.Duration // added per running sequence
	TimeScale           float64       // multiplies every modelled duration; 0 = no modelled latency
	// WarmupRequests models an engine that is still warming (kernels
	// compiled, graphs captured on first use): until it has finished this
	// many requests, each step takes up to WarmupSlowdown times as long,
	// the factor falling linearly to 1. 0 = warm from the start.
	WarmupRequests int
}

// WarmupSlowdown is how many times slower a warming engine's first step is
// (Profile.WarmupRequests).
const WarmupSlowdown = 3.0

// warmingFactor is what a step takes, relative to a warm engine's, once
// finished requests have been served.
func (p Profile) warmingFactor(finished int64) float64 {
	if p.WarmupRequests <= 0 || finished >= int64(p.WarmupRequests) {
		return 1
	}
	return 1 + (WarmupSlowdown-1)*float64(int64(p.WarmupRequests)-finished)/float64(p.WarmupRequests)
}

// WeightBytes returns the modelled memory taken by the weights.
func (p Profile) WeightBytes() int64 {
	return int64(p.Params * p.WeightBytesPerParam)
}

// KVBytesPerToken returns 2 (K and V) × layers × KV heads × head dim × bytes per element.
func (p Profile) KVBytesPerToken() int64 {
	return int64(2 * float64(p.Layers*p.KVHeads*p.HeadDim) * p.KVBytesPerElement)
}

// KVPoolBytes returns the memory left for the KV cache: memory × utilisation
// − weights − activation buffers, never negative.
func (p Profile) KVPoolBytes() int64 {
	pool := int64(float64(p.GPUMemoryBytes)*p.MemoryUtilization) - p.WeightBytes() - activationBytes
	if pool < 0 {
		return 0
	}
	return pool
}

// KVBlocks returns the number of KV blocks of BlockSize tokens the pool holds.
func (p Profile) KVBlocks() int {
	per := p.KVBytesPerToken() * int64(p.BlockSize)
	if per <= 0 {
		return 0
	}
	return int(p.KVPoolBytes() / per)
}

// Validate reports a profile the scheduler cannot run: missing shapes, or a
// KV pool that cannot hold one sequence of the full context window.
func (p Profile) Validate() error {
	switch {
	case p.Layers <= 0 || p.KVHeads <= 0 || p.HeadDim <= 0 || p.Params <= 0:
		return fmt.Errorf("profile %s: model shape must be positive", p.Name)
	case p.ContextWindow <= 0 || p.MaxRunningSeqs <= 0 || p.BlockSize <= 0:
		return fmt.Errorf("profile %s: context window, max running seqs and block size must be positive", p.Name)
	case p.PrefillTokensPerSec <= 0:
		return fmt.Errorf("profile %s: prefill rate must be positive", p.Name)
	case p.TimeScale < 0:
		return fmt.Errorf("profile %s: time scale %g is negative", p.Name, p.TimeScale)
	case p.WarmupRequests < 0:
		return fmt.Errorf("profile %s: warm-up requests %d is negative", p.Name, p.WarmupRequests)
	}
	switch p.OnKVFull {
	case OnKVFullQueue, OnKVFullPreempt, OnKVFullFail:
	default:
		return fmt.Errorf("profile %s: on-kv-full %q: want queue, preempt or fail", p.Name, p.OnKVFull)
	}
	if need := (p.ContextWindow + p.BlockSize - 1) / p.BlockSize; p.KVBlocks() < need {
		return fmt.Errorf("profile %s: KV pool of %d blocks cannot hold one %d-token sequence (%d blocks); lower the context window or use a larger GPU",
			p.Name, p.KVBlocks(), p.ContextWindow, need)
	}
	return nil
}

// l4 returns the GPU and scheduling half of a profile: an L4-like card with
// vLLM's defaults, so that long documents at high concurrency saturate KV.
func l4(p Profile) Profile {
	p.GPUName = "NVIDIA L4 (simulated)"
	p.GPUMemoryBytes = L4MemoryBytes
	p.MemoryUtilization = DefaultMemoryUtilization
	p.ContextWindow = DefaultContextWindow
	p.MaxRunningSeqs = DefaultMaxRunningSeqs
	p.BlockSize = DefaultBlockSize
	p.OnKVFull = OnKVFullPreempt
	p.PrefillTokensPerSec = DefaultPrefillTokensPerSec
	p.DecodeStepBase = DefaultDecodeStepBase
	p.DecodeStepPerSeq = DefaultDecodeStepPerSeq
	p.TimeScale = DefaultTimeScale
	p.Dtype = "bf16"
	p.WeightBytesPerParam = 2
	p.KVBytesPerElement = 2
	return p
}

// presets are the built-in base profiles by served name.
var presets = map[string]Profile{
	// Llama-3.1-8B shape: on 24 GB the KV pool holds ~35k tokens in bf16.
	"sim-8b": l4(Profile{Name: "sim-8b", Layers: 32, KVHeads: 8, HeadDim: 128, Params: 8.03e9}),
	// Llama-3.2-1B shape: the KV pool is large; it rarely saturates.
	"sim-1b": l4(Profile{Name: "sim-1b", Layers: 16, KVHeads: 8, HeadDim: 64, Params: 1.24e9}),
}

// Quantisation variants: weight bytes per parameter (group scales included)
// and how much faster a decode step gets, decode being bound by weight reads.
var quantisations = map[string]struct {
	bytesPerParam float64
	stepFactor    float64
}{
	"bf16": {2, 1},
	"int8": {1.03, 0.65},
	"int4": {0.56, 0.45},
}

// Presets returns the names LookupProfile knows, sorted: every base preset
// and its -int8 and -int4 variants.
func Presets() []string {
	var names []string
	for name := range presets {
		names = append(names, name, name+"-int8", name+"-int4")
	}
	sort.Strings(names)
	return names
}

// LookupProfile returns the preset profile for a model name such as
// "sim-8b" or "sim-8b-int4". A quantisation suffix changes the weight
// format; the extractor's perturbation follows the same variant.
func LookupProfile(name string) (Profile, error) {
	base, variant := SplitVariant(name)
	p, ok := presets[base]
	if !ok {
		return Profile{}, fmt.Errorf("lookup profile %q: unknown model; known: %s", name, strings.Join(Presets(), ", "))
	}
	return p.WithVariant(variant), nil
}

// SplitVariant splits a model name into its base and quantisation variant
// ("bf16" when the name has no -int8 or -int4 suffix).
func SplitVariant(name string) (base, variant string) {
	for _, v := range []string{"int8", "int4", "bf16"} {
		if b, ok := strings.CutSuffix(name, "-"+v); ok {
			return b, v
		}
	}
	return name, "bf16"
}

// WithVariant returns p with the weights in the given format ("bf16",
// "int8", "int4"; "" keeps p as is). The name gains the suffix.
func (p Profile) WithVariant(variant string) Profile {
	q, ok := quantisations[variant]
	if !ok || variant == p.Dtype {
		return p
	}
	base, _ := SplitVariant(p.Name)
	from := quantisations[p.Dtype].stepFactor
	if from == 0 {
		from = 1
	}
	p.DecodeStepBase = time.Duration(float64(p.DecodeStepBase) / from * q.stepFactor)
	p.Dtype = variant
	p.WeightBytesPerParam = q.bytesPerParam
	p.Name = base
	if variant != "bf16" {
		p.Name = base + "-" + variant
	}
	return p
}
