// Package family is the registry of engine families: for each one, in one
// file, how it is identified, what it says of itself, its request quirks,
// where its telemetry is and under which names, how its prompt cache is
// emptied, the texts by which it says it ran out of memory, and its start
// recipe. The client, telemetry and the run read every fact of an engine
// from here, so that adding a family is adding its file (and fixtures).
//
// It imports only the root (the canonical metric names): the client, which
// talks to the engine, implements Caller for the families' own calls.
package family

import (
	"cmp"
	"context"
	"encoding/json"
	"regexp"
	"slices"
)

// Family is one engine family.
type Family struct {
	// Kind names the family as a protocol's engine.kind, the manifest and
	// the Parquet engine column write it; "" is the generic family.
	Kind string
	// Doc names the engine for people ("vLLM").
	Doc string

	// OwnedBy are the /v1/models owned_by values only this family writes.
	OwnedBy []string
	// Probes are endpoints only this family answers so, asked after
	// owned_by, every family's in All's order.
	Probes []Probe

	// VersionPath is the endpoint where the engine says its version (the
	// client's Describe asks every family's, in order); "" for none.
	VersionPath string
	// identify reads the family's identity: see Identity.
	identify func(ctx context.Context, c Caller) (Identity, error)

	Quirks    Quirks
	Telemetry Telemetry
	Reset     Reset
	// MemoryEvidence match the engine's own texts (an HTTP body, an in-stream
	// error, its log) that say it ran out of memory: the common ones of CUDA,
	// PyTorch and the allocators, then the family's own.
	MemoryEvidence []*regexp.Regexp
	// Start is where this repository's start recipe for the family lives
	// (a path from the repository root), or "" when README's engine table
	// gives only the command line.
	Start string
}

// Probe is an endpoint asked with GET whose JSON object answer, matched,
// names the family.
type Probe struct {
	Path  string
	Match func(answer map[string]json.RawMessage) bool
}

// Quirks are how the family's requests and answers differ from OpenAI's in
// ways a measurement must know.
type Quirks struct {
	// CachedTokens are the JSON paths of a chat answer where the family
	// reports the prompt tokens its cache served ("usage.prompt_tokens_details.cached_tokens");
	// none: it never says, and cached_prompt_tokens stays NULL.
	CachedTokens []string
	// KeepAlive is what the engine does with an idle model or connection
	// that changes what a pass measures; "" when nothing.
	KeepAlive string
	// Errors is the shape of its error bodies where it is not OpenAI's
	// {"error": {"message": ...}}; "" when it is.
	Errors string
}

// Caller sends the families' own calls to an engine: the client is one.
type Caller interface {
	// Ask sends method path without a body and returns the status and the
	// (bounded) body whatever the status; err when no answer came.
	Ask(ctx context.Context, method, path string) (status int, body []byte, err error)
	// Clean makes an engine's text safe to store: secrets redacted,
	// control characters out.
	Clean(s string) string
}

// registry holds every family, filled by each family's file.
var registry []*Family

// register adds f to the registry; each family's file calls it once.
func register(f *Family) *Family {
	f.MemoryEvidence = append(slices.Clip(commonMemoryEvidence), f.MemoryEvidence...)
	registry = append(registry, f)
	return f
}

// All returns the named families by kind, the generic one left out: the
// order in which probes are asked and metric names tried. The slice is a
// copy; the families are shared and never changed.
func All() []*Family {
	out := make([]*Family, 0, len(registry))
	for _, f := range registry {
		if f.Kind != "" {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *Family) int { return cmp.Compare(a.Kind, b.Kind) })
	return out
}

// ByKind returns the family of kind, or Generic for "" and for a kind no
// file defines (a protocol may name an engine extractbench knows nothing
// of: it is measured as the generic family).
func ByKind(kind string) *Family {
	for _, f := range registry {
		if f.Kind == kind {
			return f
		}
	}
	return Generic
}

// Known reports whether kind is a family's ("" is not).
func Known(kind string) bool { return kind != "" && ByKind(kind) != Generic }

// ByOwnedBy returns the family that writes owned_by in /v1/models, nil
// when none does.
func ByOwnedBy(ownedBy string) *Family {
	for _, f := range All() {
		if slices.Contains(f.OwnedBy, ownedBy) {
			return f
		}
	}
	return nil
}

// ProbeFamily is a probe with the family it names.
type ProbeFamily struct {
	Probe
	Family *Family
}

// Probes returns every family's probes in All's order.
func Probes() []ProbeFamily {
	var out []ProbeFamily
	for _, f := range All() {
		for _, p := range f.Probes {
			out = append(out, ProbeFamily{Probe: p, Family: f})
		}
	}
	return out
}

// VersionPaths returns the endpoints where families say their version, in
// All's order, each once.
func VersionPaths() []string {
	var out []string
	for _, f := range All() {
		if f.VersionPath != "" && !slices.Contains(out, f.VersionPath) {
			out = append(out, f.VersionPath)
		}
	}
	return out
}

// Label is the family's kind, or "an engine of unknown kind" for the
// generic family (and nil), for the texts that name it.
func (f *Family) Label() string {
	if f == nil || f.Kind == "" {
		return "an engine of unknown kind"
	}
	return f.Kind
}

func has(a map[string]json.RawMessage, key string) bool {
	v, ok := a[key]
	return ok && string(v) != "null"
}

func stringOf(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}
