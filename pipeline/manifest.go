package pipeline

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/extractbench/extractbench/results"
)

// ToolVersion is extractbench's version; ScorerVersion changes whenever a
// scoring or classification rule changes, so that results scored under
// different rules never share a fingerprint.
const (
	ToolVersion   = "0.1.0"
	ScorerVersion = "1"
)

// The manifest is defined by package results, which stores and reads it.
type (
	Manifest        = results.Manifest
	ToolInfo        = results.ToolInfo
	CorpusInfo      = results.CorpusInfo
	SchemaInfo      = results.SchemaInfo
	EngineInfo      = results.EngineInfo
	GPUInfoJSON     = results.GPUInfoJSON
	VariantManifest = results.VariantManifest
	HostInfo        = results.HostInfo
)

func hostInfo() HostInfo {
	return HostInfo{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
}

// Fingerprint hashes what pins a run's results (results.Fingerprint).
func Fingerprint(m *Manifest) string { return results.Fingerprint(m) }

func sha256Hex(b []byte) string { return results.SHA256Hex(b) }

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
