package family

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"github.com/extractbench/extractbench"
)

// LlamaCpp is llama.cpp's llama-server.
var LlamaCpp = register(&Family{
	Kind:    "llamacpp",
	Doc:     "llama.cpp",
	OwnedBy: []string{"llamacpp"},
	Probes: []Probe{{Path: "/props", Match: func(a map[string]json.RawMessage) bool {
		return has(a, "build_info") || has(a, "default_generation_settings")
	}}},
	VersionPath: "/props", // build_info; /version is a 404 (build b1-de3ff81)
	identify:    llamaCppIdentity,
	Quirks: Quirks{
		// Builds from 2025 fill OpenAI's field; timings.cache_n on the
		// final chunk is older and stays.
		CachedTokens: []string{"usage.prompt_tokens_details.cached_tokens", "timings.cache_n"},
		KeepAlive:    "closes a kept-alive connection after every streamed answer although it sends Keep-Alive: timeout=5, max=100: a request written on it is lost before the server reads it, and the client sends it again on a new connection",
		Errors:       `{"error": {"code": N, "message": "...", "type": "..."}}`,
	},
	Telemetry: prometheusAt(&Prometheus{
		Dialect: "llamacpp", // started with --metrics
		Names: map[string][]string{
			extractbench.MetricRunning: {"llamacpp:requests_processing"},
			extractbench.MetricWaiting: {"llamacpp:requests_deferred"},
			// Used cells over n_ctx. llama.cpp removed both KV gauges from
			// /metrics in May 2025 (PR 13660): current builds leave KV NULL.
			extractbench.MetricKVUsage:  {"llamacpp:kv_cache_usage_ratio"},
			extractbench.MetricKVTokens: {"llamacpp:kv_cache_tokens"},
		},
	}, "preemptions and every histogram; KV usage in builds from May 2025"),
	Reset: Reset{
		Do:   resetLlamaCppSlots,
		Note: "its host-memory prompt cache (--cache-ram) has no endpoint: start it with --cache-ram 0",
	},
	MemoryEvidence: []*regexp.Regexp{
		// ggml's allocators ("failed to allocate CUDA0 buffer", "unable to
		// allocate backend buffer"), and a KV pool its slots share that a
		// batch found full (a 500 under load, while the server lives):
		// server-context.cpp "Context size has been exceeded.", older
		// server.cpp "Input prompt is too big compared to KV size".
		regexp.MustCompile(`(?i)(failed|unable) to allocate`),
		regexp.MustCompile(`(?i)insufficient memory`),
		regexp.MustCompile(`(?i)context size has been exceeded`),
		regexp.MustCompile(`(?i)compared to kv size`),
	},
	Start: "engines/llamacpp/serve.sh",
})

// llamaCppIdentity is /props: build_info, the model's path, its file type
// and each slot's context.
func llamaCppIdentity(ctx context.Context, c Caller) (Identity, error) {
	a, err := getObject(ctx, c, "/props")
	if err != nil {
		return Identity{}, err
	}
	id := Identity{Source: "/props", Version: c.Clean(stringOf(a["build_info"])), Model: c.Clean(stringOf(a["model_path"]))}
	if id.Version == "" {
		return id, fmt.Errorf("GET /props: no build_info: %w", ErrNoIdentity)
	}
	id.Extra = extras(c, a, "model_ftype", "total_slots")
	var d struct {
		NCtx int `json:"n_ctx"`
	}
	if json.Unmarshal(a["default_generation_settings"], &d) == nil && d.NCtx > 0 {
		if id.Extra == nil {
			id.Extra = map[string]string{}
		}
		id.Extra["n_ctx"] = strconv.Itoa(d.NCtx)
	}
	return id, nil
}

// resetLlamaCppSlots erases every slot of a llama-server: GET /slots lists
// them ([{"id":0,...},...]; 501 when started with --no-slots, then /props's
// total_slots says how many), then POST /slots/{id}?action=erase each
// ({"id_slot":0,"n_erased":1234}; 501 unless started with
// --slot-save-path in build b1-de3ff81). Any slot not erased fails the reset.
func resetLlamaCppSlots(ctx context.Context, c Caller) ResetResult {
	ids, listed, err := llamaCppSlots(ctx, c)
	if err != nil {
		return ResetResult{Detail: err.Error()}
	}
	var erased int64
	first := ""
	for _, id := range ids {
		path := "/slots/" + strconv.Itoa(id) + "?action=erase"
		status, body, err := c.Ask(ctx, http.MethodPost, path)
		answer := Answer(c, http.MethodPost, path, status, body, err)
		if err != nil || !ok2xx(status) {
			return ResetResult{Detail: listed + "; " + answer}
		}
		var e struct {
			NErased int64 `json:"n_erased"`
		}
		_ = json.Unmarshal(body, &e)
		erased += e.NErased
		if first == "" {
			first = answer
		}
	}
	return ResetResult{Done: true, Detail: fmt.Sprintf("%s; erased %d slots, %d cached tokens in all (first: %s); llama.cpp's host-memory prompt cache (--cache-ram) has no endpoint: start it with --cache-ram 0",
		listed, len(ids), erased, first)}
}

// llamaCppSlots is the ids of a llama-server's slots and how they were
// learnt.
func llamaCppSlots(ctx context.Context, c Caller) ([]int, string, error) {
	status, body, err := c.Ask(ctx, http.MethodGet, "/slots")
	listed := Answer(c, http.MethodGet, "/slots", status, body, err)
	if err == nil && status == http.StatusOK {
		var slots []struct {
			ID *int `json:"id"`
		}
		if jerr := json.Unmarshal(body, &slots); jerr != nil || len(slots) == 0 {
			return nil, "", errors.New("GET /slots: 200 without a list of slots: " + c.Clean(short(string(body), maxAnswerDetail)))
		}
		ids := make([]int, 0, len(slots))
		for _, s := range slots {
			if s.ID == nil {
				return nil, "", errors.New("GET /slots: a slot without an id: " + c.Clean(short(string(body), maxAnswerDetail)))
			}
			ids = append(ids, *s.ID)
		}
		return ids, fmt.Sprintf("GET /slots: %d slots", len(ids)), nil
	}
	// --no-slots: /props still says how many there are (ids 0..n-1).
	pstatus, pbody, perr := c.Ask(ctx, http.MethodGet, "/props")
	var props struct {
		TotalSlots int `json:"total_slots"`
	}
	if perr != nil || pstatus != http.StatusOK || json.Unmarshal(pbody, &props) != nil || props.TotalSlots <= 0 {
		return nil, "", fmt.Errorf("%s; %s", listed, Answer(c, http.MethodGet, "/props", pstatus, pbody, perr))
	}
	ids := make([]int, props.TotalSlots)
	for i := range ids {
		ids[i] = i
	}
	return ids, fmt.Sprintf("%s; GET /props: total_slots %d", listed, props.TotalSlots), nil
}
