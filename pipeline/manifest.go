package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// ToolVersion is extractbench's version; ScorerVersion changes whenever a
// scoring or classification rule changes, so that results scored under
// different rules never share a fingerprint.
const (
	ToolVersion   = "0.1.0"
	ScorerVersion = "1"
)

// Manifest is everything MEASUREMENT.md section 1 pins, stored as JSON in
// runs.manifest. The top-level model/engine/gpu describe the first variant;
// Variants has each.
type Manifest struct {
	Tool           ToolInfo          `json:"tool"`
	ProtocolName   string            `json:"protocol_name"`
	ProtocolSource string            `json:"protocol_source"`
	Protocol       json.RawMessage   `json:"protocol"`
	Corpus         CorpusInfo        `json:"corpus"`
	OutputSchema   SchemaInfo        `json:"output_schema"`
	Prompt         Prompt            `json:"prompt"`
	Generation     Generation        `json:"generation"`
	Parse          string            `json:"parse"`
	Acceptance     Acceptance        `json:"acceptance"`
	Sweep          Sweep             `json:"sweep"`
	Simulated      bool              `json:"simulated"`
	Model          string            `json:"model"`
	Engine         EngineInfo        `json:"engine"`
	GPU            GPUInfoJSON       `json:"gpu"`
	Variants       []VariantManifest `json:"variants"`
	Host           HostInfo          `json:"host"`
	Fingerprint    string            `json:"fingerprint"`
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
	URL     string `json:"url"` // never with credentials
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// VersionSource is the endpoint Version came from (/version, /info, ...);
	// About is that endpoint's answer, secrets and long strings left out.
	VersionSource string          `json:"version_source,omitempty"`
	About         json.RawMessage `json:"about,omitempty"`
	Model         string          `json:"model"`
	Revision      string          `json:"revision,omitempty"`
	ServedModels  []string        `json:"served_models,omitempty"`
	Tokenizer     string          `json:"tokenizer,omitempty"`
	ChatTemplate  string          `json:"chat_template,omitempty"`
	ContextWindow int             `json:"context_window,omitempty"`
	Started       bool            `json:"started"`                  // extractbench started it (load time measured)
	RandomWeights bool            `json:"random_weights,omitempty"` // answers (so quality figures) mean nothing
	Simulated     bool            `json:"simulated"`
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
	Environment string          `json:"environment,omitempty"` // EnvironmentHash, pinned at the variant's first start
}

// HostInfo describes the client machine.
type HostInfo struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
}

func hostInfo() HostInfo {
	return HostInfo{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
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
	return sha256Hex(b)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// EnvironmentHash hashes what an engine says of itself and of the card it
// runs on, known only once it is up: engine version, served models, GPU
// name, driver and CUDA. The fingerprint covers what is known before any
// engine starts; this hash is pinned per variant at its first start and a
// resumed run refuses a variant whose environment changed
// (results/SCHEMA.md, runs.manifest).
func EnvironmentHash(vm VariantManifest) string {
	b, _ := json.Marshal(environmentFacts(vm))
	return sha256Hex(b)
}

// environmentFacts are the facts EnvironmentHash covers, by name.
func environmentFacts(vm VariantManifest) [][2]string {
	models := slices.Clone(vm.Engine.ServedModels)
	slices.Sort(models)
	return [][2]string{
		{"engine version", vm.Engine.Version},
		{"served models", strings.Join(models, ",")},
		{"GPU", vm.GPU.Name},
		{"driver", vm.GPU.Driver},
		{"CUDA", vm.GPU.CUDA},
	}
}

// environmentDiff names the facts that differ between a pinned and a new
// environment; "" when none does.
func environmentDiff(pinned, now VariantManifest) string {
	a, b := environmentFacts(pinned), environmentFacts(now)
	var diffs []string
	for i := range a {
		if a[i][1] != b[i][1] {
			diffs = append(diffs, fmt.Sprintf("%s %q, now %q", a[i][0], a[i][1], b[i][1]))
		}
	}
	return strings.Join(diffs, "; ")
}
