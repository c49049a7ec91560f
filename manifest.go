package extractbench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Manifest is everything MEASUREMENT.md section 1 pins, stored as JSON in
// runs.manifest. The top-level model/engine/gpu describe the first variant;
// Variants has each.
type Manifest struct {
	Tool           ToolInfo        `json:"tool"`
	ProtocolName   string          `json:"protocol_name"`
	ProtocolSource string          `json:"protocol_source"`
	Protocol       json.RawMessage `json:"protocol"`
	Corpus         CorpusInfo      `json:"corpus"`
	OutputSchema   SchemaInfo      `json:"output_schema"`
	Prompt         Prompt          `json:"prompt"`
	Generation     Generation      `json:"generation"`
	Parse          string          `json:"parse"`
	Acceptance     Acceptance      `json:"acceptance"`
	Sweep          Sweep           `json:"sweep"`
	// Cache is the protocol's cache key: "reset" (the engine's prompt cache
	// emptied before each pass) or "keep"; "" in manifests written before.
	Cache     string `json:"cache,omitempty"`
	Simulated bool   `json:"simulated"`
	// Clock is ClockEngine when every latency was measured on the
	// simulated engine's own clock (Clock.WithEngineClock); empty: the
	// wall clock.
	Clock       string            `json:"clock,omitempty"`
	Model       string            `json:"model"`
	Engine      EngineInfo        `json:"engine"`
	GPU         GPUInfoJSON       `json:"gpu"`
	Variants    []VariantManifest `json:"variants"`
	Host        HostInfo          `json:"host"`
	Fingerprint string            `json:"fingerprint"`
	// Shard is the part of the corpus a `run -shard I/N` measured; nil for
	// a run over the whole corpus. Corpus stays the whole corpus's, and the
	// fingerprint does not cover the shard: shards of one run share it.
	Shard *Shard `json:"shard,omitempty"`
	// Merge lists the shards a `merge` built this run from; nil otherwise.
	Merge *Merge `json:"merge,omitempty"`
}

// ToolInfo names the measuring tool and its scoring rules.
type ToolInfo struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	ScorerVersion string `json:"scorer_version"`
}

// CorpusInfo pins the corpus by its manifest hash.
type CorpusInfo struct {
	Path    string         `json:"path"`
	SHA256  string         `json:"sha256"`
	Count   int            `json:"count"`
	Classes map[string]int `json:"classes"`
}

// SchemaInfo pins the output schema.
type SchemaInfo struct {
	Source string `json:"source"` // "default" or a path
	SHA256 string `json:"sha256"`
}

// EngineInfo is what is known of an engine: configured, and as it reported itself.
type EngineInfo struct {
	URL string `json:"url"` // never with credentials; "" for replicas (Endpoints)
	// Endpoints are a variant's replicas (engine.urls), credentials removed,
	// in the protocol's order: the names requests.endpoint and
	// telemetry.endpoint use. Empty for one engine (URL).
	Endpoints []string `json:"endpoints,omitempty"`
	Kind      string   `json:"kind"`
	Version   string   `json:"version,omitempty"`
	// VersionSource is the endpoint Version came from (/version, /info, ...);
	// About is that endpoint's answer, secrets and long strings left out.
	VersionSource string          `json:"version_source,omitempty"`
	About         json.RawMessage `json:"about,omitempty"`
	Model         string          `json:"model"`
	Revision      string          `json:"revision,omitempty"`
	ServedModels  []string        `json:"served_models,omitempty"`
	// File is what the engine says of the weights file it serves (llama.cpp:
	// its type, bytes and parameters); nil when it says nothing. Part of
	// the variant's environment: one alias may serve BF16 or Q4_0.
	File      *ModelFile `json:"file,omitempty"`
	Tokenizer string     `json:"tokenizer,omitempty"`
	// TokenizerSHA256 is the sha256 of the tokenizer.json that Tokenizer
	// names, when it names one: the file every request's expected prompt
	// count came from (tokenizer drift).
	TokenizerSHA256 string `json:"tokenizer_sha256,omitempty"`
	ChatTemplate    string `json:"chat_template,omitempty"`
	ContextWindow   int    `json:"context_window,omitempty"`
	Weights         string `json:"weights,omitempty"`        // weight precision: bf16, fp8, int8, int4 ("" = read from the names)
	Quantization    string `json:"quantization,omitempty"`   // the scheme, as the protocol or the engine names it
	Params          int64  `json:"params,omitempty"`         // parameter count, for the MFU estimate
	Started         bool   `json:"started"`                  // extractbench started it (load time measured)
	RandomWeights   bool   `json:"random_weights,omitempty"` // answers (so quality figures) mean nothing
	Simulated       bool   `json:"simulated"`
}

// ModelFile is an engine's served weights file as it describes it; a zero
// field is unknown.
type ModelFile struct {
	Format string `json:"format,omitempty"` // the engine's name for its type: "Q8_0", "BF16"
	Bytes  int64  `json:"bytes,omitempty"`
	Params int64  `json:"params,omitempty"`
}

// GPUInfoJSON describes the card the engine ran on, as nvidia-smi (or the
// built-in engine's profile) reports it.
type GPUInfoJSON struct {
	Name             string `json:"name,omitempty"`
	MemoryTotalBytes int64  `json:"memory_total_bytes,omitempty"`
	Driver           string `json:"driver,omitempty"`
	CUDA             string `json:"cuda,omitempty"`
	Source           string `json:"source,omitempty"` // nvidia-smi | builtin-profile | protocol | protocol+nvidia-smi | unknown
}

// VariantManifest pins one variant's engine and card.
type VariantManifest struct {
	Name        string          `json:"name"`
	Engine      EngineInfo      `json:"engine"`
	GPU         GPUInfoJSON     `json:"gpu"`
	Extra       json.RawMessage `json:"builtin_profile,omitempty"`
	Environment string          `json:"environment,omitempty"` // pipeline.EnvironmentHash, pinned at the variant's first start
	// AutoLevels: an auto rate sweep's measured rates and chosen levels; nil otherwise.
	AutoLevels *AutoLevels `json:"auto_levels,omitempty"`
}

// HostInfo describes the client machine.
type HostInfo struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
}

// Prompt is the chat prompt; User contains {{document}}.
type Prompt struct {
	System string `json:"system"`
	User   string `json:"user"`
}

// Generation holds the sampling settings sent with every request.
type Generation struct {
	MaxTokens   int     `json:"max_tokens"`
	Temperature float64 `json:"temperature"`
	Seed        *int    `json:"seed,omitempty"`
}

// Sweep is the one parameter a run grows.
type Sweep struct {
	Mode Mode `json:"mode"`
	// Levels are the levels as written; nil when Auto.
	Levels []int `json:"levels"`
	// Auto is `levels: auto` (rate mode): the synchronous rate and the
	// saturated throughput are measured first, then AutoLevels rates are
	// spaced evenly between them (ChooseAutoLevels). Written back as
	// "levels": "auto".
	Auto bool `json:"-"`
	// AutoLevels is how many rates an auto sweep spaces (sweep.auto_levels,
	// default DefaultAutoLevels); 0 unless Auto.
	AutoLevels int `json:"auto_levels,omitempty"`
	// Classes is `levels: classes` (context mode): the levels are the
	// corpus's length classes in order (LengthClasses: 1 short,
	// 2 usual, 3 long), each pass sending that class's documents only.
	// Written back as "levels": "classes".
	Classes bool `json:"-"`
	// Concurrency is a context sweep's fixed number of requests in flight
	// (sweep.concurrency); 0 in other modes.
	Concurrency     int    `json:"concurrency,omitempty"`
	Repetitions     int    `json:"repetitions"`
	Warmup          int    `json:"warmup"`
	OnMemoryFailure string `json:"on_memory_failure"`
	// Rate mode only (empty otherwise, so that the canonical protocol, and
	// the fingerprint, of other modes stay as they were).
	Arrival     string  `json:"arrival,omitempty"`       // ArrivalPoisson (default) or ArrivalConstant
	Burstiness  float64 `json:"burstiness,omitempty"`    // gamma shape of Poisson gaps; 0 or 1 = Poisson
	MaxInFlight int     `json:"max_in_flight,omitempty"` // cap on requests in flight; 0 = none
	// Order is the order a pass sends its documents in (sweep.order):
	// OrderShuffle (the protocol's default) or OrderCorpus, always written
	// once the protocol is parsed. It changes what is measured, so the
	// canonical protocol, and the fingerprint, cover it. "" is a manifest
	// written before the option: its passes went in corpus order.
	Order string `json:"order,omitempty"`
}

// The send orders of a pass (sweep.order).
const (
	// OrderShuffle sends each pass's documents in a seeded random order
	// (pipeline/dispatch.OrderSeed): corpus order correlates with length,
	// so a trend over send order in corpus order measures the corpus.
	OrderShuffle = "shuffle"
	// OrderCorpus sends them in corpus order, as runs before sweep.order did.
	OrderCorpus = "corpus"
)

// Shuffled reports whether the sweep's passes send their documents in a
// seeded random order; a manifest without sweep.order sent them in corpus
// order.
func (s Sweep) Shuffled() bool { return s.Order == OrderShuffle }

// sweepJSON is Sweep as the file and the canonical protocol write it:
// levels is a list of integers or the string "auto".
type sweepJSON struct {
	Mode            Mode            `json:"mode"`
	Levels          json.RawMessage `json:"levels"`
	Repetitions     int             `json:"repetitions"`
	Warmup          int             `json:"warmup"`
	OnMemoryFailure string          `json:"on_memory_failure"`
	AutoLevels      int             `json:"auto_levels,omitempty"`
	Arrival         string          `json:"arrival,omitempty"`
	Burstiness      float64         `json:"burstiness,omitempty"`
	MaxInFlight     int             `json:"max_in_flight,omitempty"`
	Concurrency     int             `json:"concurrency,omitempty"`
	Order           string          `json:"order,omitempty"`
}

// AutoLevelsWord is the value of sweep.levels that asks for an auto sweep.
const AutoLevelsWord = "auto"

// ClassLevelsWord is the value of sweep.levels that makes a context sweep's
// levels the corpus's length classes.
const ClassLevelsWord = "classes"

// MarshalJSON writes levels as the list, or "auto".
func (s Sweep) MarshalJSON() ([]byte, error) {
	levels, err := json.Marshal(s.Levels)
	if s.Auto {
		levels, err = json.Marshal(AutoLevelsWord)
	}
	if s.Classes {
		levels, err = json.Marshal(ClassLevelsWord)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(sweepJSON{Mode: s.Mode, Levels: levels, Repetitions: s.Repetitions, Warmup: s.Warmup,
		OnMemoryFailure: s.OnMemoryFailure, AutoLevels: s.AutoLevels, Arrival: s.Arrival, Burstiness: s.Burstiness, MaxInFlight: s.MaxInFlight, Concurrency: s.Concurrency, Order: s.Order})
}

// UnmarshalJSON reads levels as a list of integers or "auto".
func (s *Sweep) UnmarshalJSON(b []byte) error {
	var j sweepJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Sweep{Mode: j.Mode, Repetitions: j.Repetitions, Warmup: j.Warmup, OnMemoryFailure: j.OnMemoryFailure,
		AutoLevels: j.AutoLevels, Arrival: j.Arrival, Burstiness: j.Burstiness, MaxInFlight: j.MaxInFlight, Concurrency: j.Concurrency, Order: j.Order}
	var word string
	if json.Unmarshal(j.Levels, &word) == nil {
		switch word {
		case AutoLevelsWord:
			s.Auto = true
		case ClassLevelsWord:
			s.Classes = true
		default:
			return fmt.Errorf("sweep.levels: %q is neither a list of levels, %q nor %q", word, AutoLevelsWord, ClassLevelsWord)
		}
		return nil
	}
	if len(j.Levels) == 0 || string(j.Levels) == "null" {
		return nil
	}
	return json.Unmarshal(j.Levels, &s.Levels)
}

// Mode is a sweep's mode, the one parameter it grows: ModeConcurrency,
// ModeBatch, ModeRate or ModeContext. Passes and records carry their
// sweep's mode; pipeline/dispatch has one dispatcher for each.
type Mode string

// The sweep modes.
const (
	ModeConcurrency Mode = "concurrency" // exactly N requests in flight (closed loop)
	ModeBatch       Mode = "batch"       // B prompts together
	// ModeRate is a rate sweep's mode: its levels are requests per second
	// (open loop), after the synchronous baseline at level SyncLevel.
	ModeRate Mode = "rate"
	// ModeContext is a context sweep's mode: at a fixed concurrency, each
	// level is a length class of the corpus (LengthClasses, from 1), and a
	// pass sends that class's documents only.
	ModeContext Mode = "context"
)

// The arrival processes of a rate sweep.
const (
	ArrivalPoisson  = "poisson"
	ArrivalConstant = "constant"
)

// SyncLevel is a rate sweep's baseline level: one request at a time, each
// sent when the previous is done (no schedule), what GuideLLM calls
// synchronous. Its rate levels are requests per second, from 1.
const SyncLevel = 0

// BaselineLevel is the level of the baseline pass: 1 (one request at a
// time) in concurrency and batch mode, SyncLevel in rate mode.
func (s Sweep) BaselineLevel() int {
	if s.Mode == ModeRate {
		return SyncLevel
	}
	return 1
}

// PlannedLevels is the pass plan's levels in order: the baseline first and
// exactly once, then the sweep's levels as written. An auto sweep plans
// only its baseline: its rates are chosen when the synchronous rate and the
// saturated throughput are measured (the variant's AutoLevels in the
// manifest, and a DecisionAutoLevels).
func (s Sweep) PlannedLevels() []int {
	if s.Classes {
		out := make([]int, len(LengthClasses))
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	base := s.BaselineLevel()
	out := []int{base}
	for _, l := range s.Levels {
		if l != base {
			out = append(out, l)
		}
	}
	return out
}

// fingerprintInput is the part of the manifest known before any engine
// starts. Engine-reported facts (version, served models, GPU) are pinned per
// variant when its engine is up, and compared again on resume.
type fingerprintInput struct {
	Tool         ToolInfo        `json:"tool"`
	Protocol     json.RawMessage `json:"protocol"`
	CorpusSHA256 string          `json:"corpus_sha256"`
	SchemaSHA256 string          `json:"schema_sha256"`
}

// Fingerprint hashes what pins a run's results.
func Fingerprint(m *Manifest) string {
	in := fingerprintInput{Tool: m.Tool, Protocol: m.Protocol, CorpusSHA256: m.Corpus.SHA256, SchemaSHA256: m.OutputSchema.SHA256}
	b, _ := json.Marshal(in)
	return SHA256Hex(b)
}

// SHA256Hex is the hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Variant returns the named variant's engine and card, falling back to the
// manifest's top-level ones (which describe the first variant, and all of
// a manifest written before variants were listed).
func (m *Manifest) Variant(name string) VariantManifest {
	for _, v := range m.Variants {
		if v.Name == name {
			if v.GPU.Name == "" {
				v.GPU = m.GPU
			}
			if v.Engine.Model == "" {
				v.Engine.Model = m.Model
			}
			return v
		}
	}
	eng := m.Engine
	if eng.Model == "" {
		eng.Model = m.Model
	}
	return VariantManifest{Name: name, Engine: eng, GPU: m.GPU}
}

// VariantNames lists the variants the protocol planned, in its order.
func (m *Manifest) VariantNames() []string {
	out := make([]string, 0, len(m.Variants))
	for _, v := range m.Variants {
		out = append(out, v.Name)
	}
	return out
}

// PlannedPasses is how many passes the protocol plans for the named
// variant, retries aside: levels × repetitions, and for an auto sweep the
// saturation probe (one pass) and the rates chosen after it (before they
// are chosen, sweep.auto_levels of them).
func (m *Manifest) PlannedPasses(variant string) int {
	reps := max(m.Sweep.Repetitions, 1)
	n := len(m.PlannedLevels()) * reps
	if m.Sweep.Auto {
		chosen := m.Sweep.AutoLevels
		if a := m.Variant(variant).AutoLevels; a != nil {
			chosen = len(a.Levels)
		}
		n += 1 + chosen*reps
	}
	return n
}

// PlannedLevels is the sweep's planned levels (Sweep.PlannedLevels); a
// context sweep's length classes without a document in the corpus are not
// levels.
func (m *Manifest) PlannedLevels() []int {
	levels := m.Sweep.PlannedLevels()
	if !m.Sweep.Classes || len(m.Corpus.Classes) == 0 {
		return levels
	}
	return slices.DeleteFunc(levels, func(l int) bool { return m.Corpus.Classes[LengthClassOf(l)] == 0 })
}

// AutoLevels is what an auto rate sweep measured before it chose its rates,
// and the rates it chose (stored per variant in the manifest, and told by a
// DecisionAutoLevels).
type AutoLevels struct {
	SyncRate      float64 `json:"sync_rate"`      // documents per second of the synchronous baseline (median over repetitions)
	ProbeLevel    int     `json:"probe_level"`    // the rate of the saturation probe, far above capacity
	SaturatedRate float64 `json:"saturated_rate"` // documents completed per second during the probe
	Levels        []int   `json:"levels"`         // the rates chosen, ascending
}

// DefaultAutoLevels is how many rates an auto sweep spaces between the
// synchronous rate and the saturated throughput (sweep.auto_levels).
const DefaultAutoLevels = 6

// ChooseAutoLevels spaces n rates evenly from the synchronous rate to the
// saturated throughput, as GuideLLM's sweep does: sync + (sat − sync)·i/n
// for i = 1..n, the last at the saturated throughput. Levels are whole
// requests per second: each is rounded, at least 1, below the probe's rate;
// duplicates are dropped, so fewer than n may remain.
func ChooseAutoLevels(syncRate, satRate float64, n, probe int) []int {
	var out []int
	for i := 1; i <= n; i++ {
		r := syncRate + (satRate-syncRate)*float64(i)/float64(n)
		l := max(int(math.Round(r)), 1)
		if probe > 0 && l >= probe {
			continue
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
