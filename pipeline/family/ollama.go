package family

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
)

// Ollama is Ollama's server (ollama serve), measured through its
// OpenAI-compatible /v1 endpoints; its own /api endpoints say what it is
// and what it holds.
var Ollama = register(&Family{
	Kind: "ollama",
	Doc:  "Ollama",
	// Its /v1/models owned_by is the model name's namespace ("library" for
	// the models of ollama.com's library, the user's name otherwise): no
	// name of its own, so it is identified by /api/version, which answers
	// the version alone.
	Probes: []Probe{{Path: "/api/version", Match: func(a map[string]json.RawMessage) bool {
		return has(a, "version") && len(a) == 1
	}}},
	VersionPath: "/api/version",
	identify:    ollamaIdentity,
	Quirks: Quirks{
		// Its OpenAI usage is prompt_tokens, completion_tokens and
		// total_tokens only (openai/openai.go Usage): nothing says what its
		// runner took from its cache, so cached_prompt_tokens stays NULL.
		KeepAlive: "unloads an idle model after keep_alive (5m by default, OLLAMA_KEEP_ALIVE), and its /v1 endpoints take no keep_alive: a pause between passes longer than that makes the next pass's first request load the model (start ollama serve with OLLAMA_KEEP_ALIVE=-1)",
		Errors:    `/v1: {"error": {"message": "...", "type": "invalid_request_error" | "not_found_error" | "api_error", "param": null, "code": null}}; /api: {"error": "..."}`,
	},
	Telemetry: Telemetry{
		Path:    "/api/ps",
		JSON:    ollamaTelemetry,
		Missing: "running and waiting requests, KV cache, preemptions, every histogram: Ollama prints no /metrics; /api/ps says only the memory its loaded models hold",
	},
	// POST /api/generate with keep_alive 0 unloads the model: the cache goes
	// only with the weights, and the next pass's first request would
	// measure a model load. That is a restart, not a reset, so none is used.
	Reset: Reset{Note: "Ollama has no prompt-cache reset; keep_alive 0 unloads the whole model, and the next pass would measure its load"},
	MemoryEvidence: []*regexp.Regexp{
		// The scheduler refuses a model that does not fit (HTTP 500), and
		// its llama.cpp runner's allocators fail as llama.cpp's do.
		regexp.MustCompile(`(?i)requires more system memory`),
		regexp.MustCompile(`(?i)(failed|unable) to allocate`),
	},
})

// ollamaPS is GET /api/ps: the models loaded in memory.
type ollamaPS struct {
	Models []struct {
		Name     string `json:"name"`
		Model    string `json:"model"`
		Digest   string `json:"digest"`
		Size     *int64 `json:"size"`      // bytes it holds in all
		SizeVRAM *int64 `json:"size_vram"` // of which on the device
		Context  int    `json:"context_length"`
		Details  struct {
			Quantization string `json:"quantization_level"`
		} `json:"details"`
	} `json:"models"`
}

func decodePS(body []byte) (ollamaPS, error) {
	var ps ollamaPS
	if err := json.Unmarshal(body, &ps); err != nil {
		return ps, fmt.Errorf("decode /api/ps: %w", err)
	}
	return ps, nil
}

// ollamaIdentity is /api/version's version and, from /api/ps, the models
// loaded now: their names, digests (a model pulled again under its name
// has another), context and quantisation. No model loaded (unloaded after
// keep_alive) is an identity without a model, not an error.
func ollamaIdentity(ctx context.Context, c Caller) (Identity, error) {
	v, err := getObject(ctx, c, "/api/version")
	if err != nil {
		return Identity{}, err
	}
	id := Identity{Source: "/api/version", Version: c.Clean(stringOf(v["version"]))}
	if id.Version == "" {
		return id, fmt.Errorf("GET /api/version: no version: %w", ErrNoIdentity)
	}
	status, body, err := c.Ask(ctx, http.MethodGet, "/api/ps")
	if err != nil || status != http.StatusOK {
		return id, fmt.Errorf("%s: %w", Answer(c, http.MethodGet, "/api/ps", status, body, err), ErrNoIdentity)
	}
	ps, err := decodePS(body)
	if err != nil {
		return id, fmt.Errorf("%w: %w", err, ErrNoIdentity)
	}
	var names, digests, contexts, quants []string
	for _, m := range ps.Models {
		names = append(names, c.Clean(m.Name))
		digests = append(digests, c.Clean(m.Digest))
		contexts = append(contexts, strconv.Itoa(m.Context))
		quants = append(quants, c.Clean(m.Details.Quantization))
	}
	id.Model = strings.Join(names, ",")
	if len(ps.Models) > 0 {
		id.Extra = map[string]string{"digest": strings.Join(digests, ","), "context_length": strings.Join(contexts, ","),
			"quantization_level": strings.Join(quants, ",")}
	}
	return id, nil
}

// ollamaTelemetry reads /api/ps: the bytes its loaded models hold on the
// device (size_vram) and in all (size), summed over the models. A model
// loaded in part on the CPU shows as size above size_vram; one held in
// system memory alone omits size_vram (docs/api.md), which is 0 on the
// device. No model loaded is 0 held, a figure; a model without its size
// leaves both unknown.
func ollamaTelemetry(body []byte) ([]Reading, error) {
	ps, err := decodePS(body)
	if err != nil {
		return nil, err
	}
	var vram, all float64
	for _, m := range ps.Models {
		if m.Size == nil {
			return nil, nil
		}
		all = addBytes(all, *m.Size)
		if m.SizeVRAM != nil {
			vram = addBytes(vram, *m.SizeVRAM)
		}
	}
	return []Reading{
		{Metric: extractbench.MetricEngineVRAM, Source: "/api/ps models[].size_vram", Value: vram},
		{Metric: extractbench.MetricEngineMemory, Source: "/api/ps models[].size", Value: all},
	}, nil
}

// addBytes adds v to a sum of bytes; a negative v, impossible, makes the
// sum that value, so that telemetry refuses the figure rather than fold it.
func addBytes(sum float64, v int64) float64 {
	if v < 0 || sum < 0 {
		return min(sum, float64(v))
	}
	return sum + float64(v)
}
