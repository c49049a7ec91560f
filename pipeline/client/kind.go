package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The engine kinds DetectKind names, as a protocol's engine.kind and the
// manifest record them.
const (
	KindVLLM         = "vllm"
	KindSGLang       = "sglang"
	KindLlamaCpp     = "llamacpp"
	KindTGI          = "tgi"
	KindOllama       = "ollama"
	KindTransformers = "transformers" // engines/transformers, our reference server
	KindBuiltin      = "builtin"      // extractbench engine serve, reached by URL
)

// Detection is what DetectKind found: the kind ("" when no answer named
// one), the answer that told it, and the models /v1/models lists.
type Detection struct {
	Kind     string
	Evidence string // "GET /v1/models: owned_by \"vllm\"", or why nothing was detected
	Models   []string
}

// kindProbes are the endpoints only one kind of engine answers, asked in
// order after /v1/models's owned_by; the first whose answer matches wins.
// The recorded answers of each are in testdata/engines.
var kindProbes = []struct {
	path, kind string
	match      func(answer map[string]json.RawMessage) bool
}{
	{"/get_server_info", KindSGLang, func(a map[string]json.RawMessage) bool { return has(a, "version") && has(a, "model_path") }},
	{"/props", KindLlamaCpp, func(a map[string]json.RawMessage) bool {
		return has(a, "build_info") || has(a, "default_generation_settings")
	}},
	{"/info", KindTGI, func(a map[string]json.RawMessage) bool { return has(a, "model_id") && has(a, "max_total_tokens") }},
	{"/api/version", KindOllama, func(a map[string]json.RawMessage) bool { return has(a, "version") && len(a) == 1 }},
	{"/version", KindBuiltin, func(a map[string]json.RawMessage) bool {
		return string(a["simulated"]) == "true" || strings.HasPrefix(stringOf(a["version"]), builtinEngineName)
	}},
	{"/version", KindTransformers, func(a map[string]json.RawMessage) bool {
		return strings.HasPrefix(stringOf(a["version"]), "transformers-")
	}},
}

// ownedBy maps /v1/models's owned_by to the kind that writes it: vLLM,
// SGLang and llama-server name themselves there.
var ownedBy = map[string]string{"vllm": KindVLLM, "sglang": KindSGLang, "llamacpp": KindLlamaCpp}

// DetectKind asks the engine what it is: the owned_by of GET /v1/models,
// then the endpoints that only one engine answers (kindProbes). An engine
// that answers none of them is of unknown kind (Kind ""), not an error; an
// engine that does not answer /v1/models at all (refused, a timeout, a
// non-2xx other than 404) is an error: nothing to measure there.
func (c *Client) DetectKind(ctx context.Context) (Detection, error) {
	var d Detection
	b, err := c.call(ctx, http.MethodGet, "/v1/models")
	switch {
	case errors.Is(err, ErrNotFound):
		d.Evidence = "GET /v1/models: not found"
	case err != nil:
		return d, fmt.Errorf("list models: %w", err)
	default:
		var m struct {
			Data []struct {
				ID      string `json:"id"`
				OwnedBy string `json:"owned_by"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return d, fmt.Errorf("list models: decode %q: %w", truncate(c.clean(string(b)), 120), err)
		}
		for _, x := range m.Data {
			d.Models = append(d.Models, x.ID)
			if k, ok := ownedBy[x.OwnedBy]; ok && d.Kind == "" {
				d.Kind, d.Evidence = k, fmt.Sprintf("GET /v1/models: owned_by %q", x.OwnedBy)
			}
		}
	}
	if d.Kind != "" {
		return d, nil
	}
	answers := map[string]map[string]json.RawMessage{}
	for _, p := range kindProbes {
		if ctx.Err() != nil {
			break
		}
		a, asked := answers[p.path]
		if !asked {
			if b, err := c.call(ctx, http.MethodGet, p.path); err == nil {
				_ = json.Unmarshal(b, &a) // not a JSON object: matches nothing
			}
			answers[p.path] = a
		}
		if a != nil && p.match(a) {
			d.Kind, d.Evidence = p.kind, "GET "+p.path
			return d, nil
		}
	}
	d.Evidence = "no answer names the engine (asked /v1/models owned_by, /get_server_info, /props, /info, /api/version, /version)"
	return d, nil
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
