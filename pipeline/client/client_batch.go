package client

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/extractbench/extractbench"
)

// ErrBatchUnsupported says the engine does not take a list of prompts on
// /v1/completions; the runner then sends B simultaneous chat requests with
// a barrier instead.
var ErrBatchUnsupported = errors.New("engine does not accept a list prompt on /v1/completions")

// Complete sends one streamed /v1/completions call whose prompt is the list
// prompts (offline batch mode) and returns one Response per prompt, in
// order. Chunks are demultiplexed by choices[].index. The call's send,
// first-byte and done instants and its transport outcome are shared by all
// prompts; first/last token, output and finish reason are each prompt's own.
// Token counts are per prompt where the engine reports them per choice
// (continuous_usage_stats) or when there is one prompt; otherwise they are
// counted from chunks and UsageReported is false. The only error is
// ErrBatchUnsupported; every other failure is in each Response's Transport.
func (c *Client) Complete(ctx context.Context, clock extractbench.Clock, schedNS int64, prompts []string, g Generation) ([]extractbench.Response, error) {
	if len(prompts) == 0 {
		return nil, nil
	}
	req := generateRequest{
		Model: c.cfg.Model, Prompt: prompts,
		MaxTokens: g.MaxTokens, Temperature: g.Temperature, Seed: g.Seed,
		Stream:         true,
		StreamOptions:  streamOptions{IncludeUsage: true, ContinuousUsage: true},
		ResponseFormat: g.ResponseFormat,
	}
	x := c.exchange(ctx, clock, schedNS, "/v1/completions", req, len(prompts))
	if x.transport.Kind == extractbench.TransportHTTPStatus && rejectsListPrompt(x.transport.HTTPStatus, x.transport.ErrorBody) {
		return nil, ErrBatchUnsupported
	}
	out := make([]extractbench.Response, len(prompts))
	for i := range prompts {
		out[i] = x.response(i, len(prompts) == 1)
	}
	return out, nil
}

// rejectsListPrompt reads a 4xx answer: 404/405 means there is no
// /v1/completions; a 400/422 that complains about the prompt's type (and is
// not a context-length rejection) means a list is not accepted.
func rejectsListPrompt(status int, body string) bool {
	switch status {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
	default:
		return false
	}
	b := strings.ToLower(body)
	if strings.Contains(b, "context length") || strings.Contains(b, "context window") ||
		strings.Contains(b, "maximum context") || strings.Contains(b, "too long") {
		return false
	}
	if !strings.Contains(b, "prompt") {
		return false
	}
	for _, w := range []string{"list", "array", "sequence", "type", "string", "str", "batch", "not supported", "unsupported"} {
		if strings.Contains(b, w) {
			return true
		}
	}
	return false
}
