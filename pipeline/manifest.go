package pipeline

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
)

func hostInfo() extractbench.HostInfo {
	return extractbench.HostInfo{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
}

func sha256Hex(b []byte) string { return extractbench.SHA256Hex(b) }

// EnvironmentHash hashes what an engine says of itself and of the card it
// runs on, known only once it is up: engine version, served models, GPU
// name, driver and CUDA, and where the engine describes it the weights file
// it serves (llama.cpp: its type, bytes and parameters, so that BF16 and
// Q4_0 under one alias are two environments; an engine that says nothing of
// its file hashes as it always did). The fingerprint covers what is known before any
// engine starts; this hash is pinned per variant at its first start and a
// resumed run refuses a variant whose environment changed
// (results/SCHEMA.md, runs.manifest).
func EnvironmentHash(vm extractbench.VariantManifest) string {
	b, _ := json.Marshal(environmentFacts(vm))
	return sha256Hex(b)
}

// environmentFacts are the facts EnvironmentHash covers, by name. The
// served file's facts follow only when the engine reported them, so that
// the hash of every other engine is what it was before they were covered.
func environmentFacts(vm extractbench.VariantManifest) [][2]string {
	models := slices.Clone(vm.Engine.ServedModels)
	slices.Sort(models)
	return append([][2]string{
		{"engine version", vm.Engine.Version},
		{"served models", strings.Join(models, ",")},
		{"GPU", vm.GPU.Name},
		{"driver", vm.GPU.Driver},
		{"CUDA", vm.GPU.CUDA},
	}, fileFacts(vm.Engine.File)...)
}

// fileFacts are the served file's facts the engine reported, by name.
func fileFacts(f *extractbench.ModelFile) [][2]string {
	if f == nil {
		return nil
	}
	var out [][2]string
	if f.Format != "" {
		out = append(out, [2]string{"served file type", f.Format})
	}
	if f.Bytes > 0 {
		out = append(out, [2]string{"served file bytes", strconv.FormatInt(f.Bytes, 10)})
	}
	if f.Params > 0 {
		out = append(out, [2]string{"served parameters", strconv.FormatInt(f.Params, 10)})
	}
	return out
}

// modelFile is the manifest's form of what the engine said of its file;
// nil when it said nothing.
func modelFile(f client.ModelFile) *extractbench.ModelFile {
	if f.IsZero() {
		return nil
	}
	return &extractbench.ModelFile{Format: f.Format, Bytes: f.Bytes, Params: f.Params}
}

// environmentDiff names the facts that differ between a pinned and a new
// environment; "" when none does. A served-file fact the pinned manifest
// lacks is not compared: a run pinned by a build that did not record it
// resumes (its version and served models still must match).
func environmentDiff(pinned, now extractbench.VariantManifest) string {
	a, b := environmentFacts(pinned), environmentFacts(now)
	nowFact := map[string]string{}
	for _, f := range b {
		nowFact[f[0]] = f[1]
	}
	var diffs []string
	for _, f := range a {
		if got := nowFact[f[0]]; got != f[1] {
			diffs = append(diffs, fmt.Sprintf("%s %q, now %q", f[0], f[1], got))
		}
	}
	return strings.Join(diffs, "; ")
}

// fileText names a served file's facts in words, for an error.
func fileText(f client.ModelFile) string {
	if f.IsZero() {
		return "(not described)"
	}
	return fmt.Sprintf("(type %q, %d bytes, %d parameters)", f.Format, f.Bytes, f.Params)
}

// pinned reports whether an earlier attempt of the run recorded the
// variant's environment.
func pinned(vm extractbench.VariantManifest) bool {
	return vm.Environment != "" || vm.Engine.Version != "" || vm.GPU.Name != ""
}

// environmentChanged is the refusal of a resume whose variant v's engine
// or card differs from the pinned one by diff (environmentDiff).
func environmentChanged(v *extractbench.Variant, diff string) error {
	return &ConfigError{fmt.Errorf("resume: variant %s ran in another environment (%s): results of a different engine, GPU, driver or CUDA are never mixed; use a new -out directory",
		v.Name, diff)}
}
