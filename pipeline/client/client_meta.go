package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/extractbench/extractbench/pipeline/family"
)

// ErrNotFound says the engine has no such endpoint (404 or 405): Health,
// Models and ResetPeaks wrap it.
var ErrNotFound = errors.New("endpoint not found")

// ErrNoAnswer says a metadata call got no answer within its deadline
// (Config.CallTimeout, or the caller's, the sooner): Health, Models and
// ResetPeaks wrap it, and Describe lists such calls in EngineReport.Missed.
var ErrNoAnswer = errors.New("no answer within the deadline")

// Health reports whether the engine answers: GET /health, or GET /v1/models
// on engines without /health.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.call(ctx, http.MethodGet, "/health")
	if errors.Is(err, ErrNotFound) {
		_, err = c.call(ctx, http.MethodGet, "/v1/models")
	}
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	return nil
}

// Models returns the ids the engine serves (GET /v1/models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	info, err := c.models(ctx)
	if err != nil {
		return nil, err
	}
	return info.ids(), nil
}

type modelList struct {
	Data []struct {
		ID          string   `json:"id"`
		OwnedBy     string   `json:"owned_by"`      // vLLM, SGLang, llama.cpp name themselves (family.ByOwnedBy)
		Aliases     []string `json:"aliases"`       // llama.cpp: --alias names
		MaxModelLen int      `json:"max_model_len"` // vLLM
		Meta        *struct {
			FType   string `json:"ftype"`    // llama.cpp: "Q8_0", "BF16", ... (builds from 2025)
			Size    int64  `json:"size"`     // llama.cpp: the GGUF file's bytes
			NParams int64  `json:"n_params"` // llama.cpp: parameters
		} `json:"meta"`
	} `json:"data"`
}

// file is what the list says of the served model's weights file: the
// entry named model (its id or an alias), else the only one.
func (m modelList) file(model string) ModelFile {
	for i, d := range m.Data {
		if d.Meta != nil && (d.ID == model || slices.Contains(d.Aliases, model) || len(m.Data) == 1 && i == 0) {
			return ModelFile{Format: d.Meta.FType, Bytes: max(d.Meta.Size, 0), Params: max(d.Meta.NParams, 0)}
		}
	}
	return ModelFile{}
}

func (m modelList) ids() []string {
	ids := make([]string, len(m.Data))
	for i, d := range m.Data {
		ids[i] = d.ID
	}
	return ids
}

func (c *Client) models(ctx context.Context) (modelList, error) {
	var m modelList
	b, err := c.call(ctx, http.MethodGet, "/v1/models")
	if err != nil {
		return m, fmt.Errorf("list models: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("list models: decode %q: %w", c.clean(truncate(string(b), 120)), err)
	}
	return m, nil
}

// ResetPeaks asks the engine to reset its peak-memory counters before a
// pass (POST /reset_peaks; our transformers engine resets torch's
// max_memory_allocated/reserved there). supported is false, with a nil
// error, when the engine has no such endpoint.
func (c *Client) ResetPeaks(ctx context.Context) (supported bool, err error) {
	_, err = c.call(ctx, http.MethodPost, "/reset_peaks")
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return true, fmt.Errorf("reset peaks: %w", err)
	}
	return true, nil
}

// ModelFile is what an engine says of the weights file it serves, where it
// says it: llama.cpp's /v1/models meta (ftype, size, n_params) and /props
// model_ftype. Under one served name (--alias) and one build, BF16, Q8_0
// and Q4_0 files of one model differ only here, so it is part of what makes
// an engine the same one (pipeline.EnvironmentHash). Zero fields are
// unknown; vLLM, SGLang, TGI, Ollama and the built-in engine report none.
type ModelFile struct {
	Format string // the file's type as the engine names it: "Q8_0", "BF16", "Q4_K - Medium"
	Bytes  int64  // its size
	Params int64  // its parameter count
}

// IsZero reports whether the engine said nothing of its file.
func (f ModelFile) IsZero() bool { return f == ModelFile{} }

// EngineReport is what an engine says of itself; empty fields are unknown.
type EngineReport struct {
	ServedModels []string
	// Family is the engine's family as its answers name it (family.Generic
	// when none does), and FamilyEvidence the answer that told it: the run
	// reads the family's reset and telemetry from it, asking nothing again.
	Family         *family.Family
	FamilyEvidence string
	Version        string
	VersionSource  string          // the endpoint Version came from (see Describe)
	About          json.RawMessage // that endpoint's whole answer, secrets and long strings left out
	ContextWindow  int
	File           ModelFile // the served weights file, where the engine describes it
	// Missed lists the calls that got no answer within their deadline
	// (ErrNoAnswer), each with its error: the report goes on without them.
	Missed []string
	// Simulated: the engine says it models a GPU rather than running on one
	// (family.SimulatedAnswer: the built-in engine's /version); ModelledGPU
	// is the card it says it models. A run records the engine as simulated
	// because it says so, not because of its URL.
	Simulated   bool
	ModelledGPU ModelledGPU
}

// ModelledGPU is the card a simulated engine says it models; zero when none.
type ModelledGPU struct {
	Name             string `json:"name"`
	MemoryTotalBytes int64  `json:"memory_total_bytes"`
}

// Describe asks the engine what it serves, which family it is and which
// version, best effort: /v1/models (vLLM adds max_model_len), the family
// probes (DetectKind), then the detected family's version endpoint and
// every other family's (family.VersionPaths) until one answers with a
// version. Each endpoint is
// asked once. Failures leave fields empty.
func (c *Client) Describe(ctx context.Context) EngineReport {
	var r EngineReport
	missed := func(err error) {
		if errors.Is(err, ErrNoAnswer) {
			r.Missed = append(r.Missed, err.Error())
		}
	}
	m, err := c.models(ctx)
	if err == nil {
		r.ServedModels = m.ids()
		if len(m.Data) > 0 {
			r.ContextWindow = m.Data[0].MaxModelLen
		}
		r.File = m.file(c.cfg.Model)
	}
	missed(err)
	p := c.newProbes(missed)
	d := c.detect(ctx, m, err != nil, p)
	r.Family, r.FamilyEvidence = d.Family, d.Evidence
	paths := family.VersionPaths()
	if vp := d.Family.VersionPath; vp != "" { // the detected family's own first
		paths = append([]string{vp}, slices.DeleteFunc(paths, func(p string) bool { return p == vp })...)
	}
	for _, path := range paths {
		if ctx.Err() != nil {
			break // the caller's deadline passed: every probe would miss
		}
		b, err := p.get(ctx, path)
		if err == nil && c.readVersion(&r, path, b) {
			break
		}
	}
	r.File.Format = truncate(c.clean(r.File.Format), maxFileFormat)
	return r
}

// readVersion fills r from a version endpoint's answer b; false when it
// names no version.
func (c *Client) readVersion(r *EngineReport, path string, b []byte) bool {
	var v struct {
		Version        string `json:"version"`
		BuildInfo      string `json:"build_info"`       // llama.cpp /props
		MaxTotalTokens int    `json:"max_total_tokens"` // TGI /info
		ModelFType     string `json:"model_ftype"`      // llama.cpp /props (builds from 2025)
		Defaults       struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"` // llama.cpp /props
		GPU json.RawMessage `json:"gpu"` // the card a simulated engine models
	}
	var a map[string]json.RawMessage
	if json.Unmarshal(b, &v) != nil || json.Unmarshal(b, &a) != nil {
		return false
	}
	version := cmp.Or(v.Version, v.BuildInfo)
	if version == "" {
		return false
	}
	r.Version, r.VersionSource = c.clean(version), path
	r.Simulated = family.SimulatedAnswer(a)
	if r.Simulated {
		_ = json.Unmarshal(v.GPU, &r.ModelledGPU) // best effort: unknown stays zero
	}
	if about := scrub(b); about != nil {
		r.About = json.RawMessage(c.red.Redact(string(about))) // json.Marshal wrote it: valid UTF-8
	}
	if r.ContextWindow == 0 {
		r.ContextWindow = cmp.Or(v.MaxTotalTokens, v.Defaults.NCtx)
	}
	if r.File.Format == "" {
		r.File.Format = v.ModelFType
	}
	return true
}

// maxFileFormat bounds ModelFile.Format: a type name, never a text.
const maxFileFormat = 64

// maxAboutString bounds one string of an engine's self-description kept
// in the manifest (llama.cpp's /props carries the whole chat template).
const maxAboutString = 2048

// secretKeys are fragments of the keys whose values never leave the engine's
// answer: SGLang's server arguments include api_key.
var secretKeys = []string{"api_key", "apikey", "secret", "password", "passwd", "hf_token", "auth"}

// scrub returns a JSON answer without secret-looking keys and with long
// strings replaced by their length; nil when b is not a JSON object.
func scrub(b []byte) json.RawMessage {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	if _, ok := v.(map[string]any); !ok {
		return nil
	}
	out, err := json.Marshal(scrubValue(v))
	if err != nil {
		return nil
	}
	return out
}

func scrubValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			lk := strings.ToLower(k)
			if slices.ContainsFunc(secretKeys, func(s string) bool { return strings.Contains(lk, s) }) {
				delete(t, k)
				continue
			}
			t[k] = scrubValue(x)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = scrubValue(x)
		}
		return t
	case string:
		if len(t) > maxAboutString {
			return fmt.Sprintf("[%d bytes left out]", len(t))
		}
	}
	return v
}

// call sends a small request and returns the body of a 2xx answer, within
// the client's CallTimeout: an engine that holds the call costs the run that
// long, never more (ErrNoAnswer). A stale pooled connection is retried as a
// chat request's is (see do).
func (c *Client) call(ctx context.Context, method, path string) ([]byte, error) {
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, method, c.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", method, path, c.cleanErr(err))
	}
	c.authorize(req)
	res, _, err := c.do(req, nil)
	if err != nil {
		return nil, c.callError(cctx, start, method+" "+path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, c.callError(cctx, start, method+" "+path+": read body", err)
	}
	switch {
	case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusMethodNotAllowed:
		return nil, fmt.Errorf("%s %s: HTTP %d: %w", method, path, res.StatusCode, ErrNotFound)
	case res.StatusCode < 200 || res.StatusCode > 299:
		return nil, errors.New(c.clean(method + " " + path + ": " + statusDetail(res, b)))
	}
	return b, nil
}

// callError is a metadata call's failure, its text cleaned; a missed
// deadline wraps ErrNoAnswer.
func (c *Client) callError(cctx context.Context, start time.Time, what string, err error) error {
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return &cleanError{msg: c.clean(fmt.Sprintf("%s: no answer after %s", what, time.Since(start).Round(time.Millisecond))), err: ErrNoAnswer}
	}
	return &cleanError{msg: c.clean(what + ": " + err.Error() + h2cHint(err)), err: err}
}

func (c *Client) cleanErr(err error) error { return &cleanError{msg: c.clean(err.Error()), err: err} }

// cleanError keeps the chain of an error (errors.Is still sees a canceled
// context) while its text is clean (see Client.clean).
type cleanError struct {
	msg string
	err error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.err }
