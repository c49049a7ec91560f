package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// errNotFound says the engine has no such endpoint (404 or 405).
var errNotFound = errors.New("endpoint not found")

// Health reports whether the engine answers: GET /health, or GET /v1/models
// on engines without /health.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.call(ctx, http.MethodGet, "/health")
	if errors.Is(err, errNotFound) {
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
		ID          string `json:"id"`
		MaxModelLen int    `json:"max_model_len"` // vLLM
	} `json:"data"`
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
		return m, fmt.Errorf("list models: decode %q: %w", truncate(string(b), 120), err)
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
	case errors.Is(err, errNotFound):
		return false, nil
	case err != nil:
		return true, fmt.Errorf("reset peaks: %w", err)
	}
	return true, nil
}

// EngineReport is what an engine says of itself; empty fields are unknown.
type EngineReport struct {
	ServedModels  []string
	Version       string
	ContextWindow int
}

// Describe asks the engine what it serves and which version it is, best
// effort: /v1/models (vLLM adds max_model_len), then /version (vLLM,
// SGLang) or /info (TGI). Failures leave fields empty.
func (c *Client) Describe(ctx context.Context) EngineReport {
	var r EngineReport
	if m, err := c.models(ctx); err == nil {
		r.ServedModels = m.ids()
		if len(m.Data) > 0 {
			r.ContextWindow = m.Data[0].MaxModelLen
		}
	}
	var v struct {
		Version        string `json:"version"`
		MaxTotalTokens int    `json:"max_total_tokens"` // TGI /info
	}
	for _, path := range []string{"/version", "/info"} {
		b, err := c.call(ctx, http.MethodGet, path)
		if err != nil || json.Unmarshal(b, &v) != nil || v.Version == "" {
			continue
		}
		r.Version = v.Version
		if r.ContextWindow == 0 {
			r.ContextWindow = v.MaxTotalTokens
		}
		break
	}
	return r
}

// call sends a small request and returns the body of a 2xx answer.
func (c *Client) call(ctx context.Context, method, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", method, path, err)
	}
	c.authorize(req)
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, &redactedError{msg: c.redact(fmt.Sprintf("%s %s: %v", method, path, err)), err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, &redactedError{msg: c.redact(fmt.Sprintf("%s %s: read body: %v", method, path, err)), err: err}
	}
	switch {
	case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusMethodNotAllowed:
		return nil, fmt.Errorf("%s %s: HTTP %d: %w", method, path, res.StatusCode, errNotFound)
	case res.StatusCode < 200 || res.StatusCode > 299:
		return nil, errors.New(c.redact(fmt.Sprintf("%s %s: HTTP %d: %s", method, path, res.StatusCode, errorMessage(b))))
	}
	return b, nil
}

// redactedError keeps the chain of an error (errors.Is still sees a
// canceled context) while its text has the API key removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
