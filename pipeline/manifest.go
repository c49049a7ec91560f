package pipeline

import (
	"runtime"

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
