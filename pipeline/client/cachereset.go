package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The outcomes of a prompt-cache reset, as passes.cache_reset stores them
// (a failure is "failed: " and what went wrong).
const (
	CacheResetDone        = "reset"       // the engine said it emptied its cache
	CacheKept             = "kept"        // the protocol asked to keep it (cache: keep)
	CacheResetUnsupported = "unsupported" // the engine's family has no reset a client can call
	CacheResetFailed      = "failed"      // the reset was asked and did not happen
)

// CacheReset is what one engine answered when asked to empty its prompt
// (prefix) cache before a measured pass.
type CacheReset struct {
	Outcome string // CacheResetDone, CacheResetUnsupported or CacheResetFailed
	// Detail is what was asked and what the engine answered (statuses and
	// short bodies, cleaned as every engine text is), or why nothing was.
	Detail string
}

// Column is the outcome as passes.cache_reset stores it: the outcome, and
// for a failure what failed.
func (r CacheReset) Column() string {
	if r.Outcome == CacheResetFailed {
		return CacheResetFailed + ": " + r.Detail
	}
	return r.Outcome
}

// cacheResetter empties one family's cache through c.
type cacheResetter func(ctx context.Context, c *Client) CacheReset

// cacheResets is the one place that knows how each engine family empties
// its prompt cache, keyed by the kinds DetectKind names: what the engine
// registry will hold per family. A family missing here (TGI, Ollama, our
// transformers server, an unknown engine) has no reset a client can call.
var cacheResets = map[string]cacheResetter{
	// llama.cpp keeps each slot's last prompt (and, with --cache-ram, more
	// in host memory, which no endpoint empties): every slot is erased.
	KindLlamaCpp: resetLlamaCppSlots,
	// SGLang's radix cache: POST /flush_cache (refused while requests run).
	KindSGLang: postReset("/flush_cache"),
	// vLLM's automatic prefix cache: POST /reset_prefix_cache (served
	// only with VLLM_SERVER_DEV_MODE=1 in recent versions: a 404 says so).
	KindVLLM: postReset("/reset_prefix_cache"),
	// The built-in engine keeps no prompt cache; its endpoint says so, and
	// the reset is exercised end to end.
	KindBuiltin: postReset(BuiltinCacheResetPath),
}

// BuiltinCacheResetPath is the built-in engine's reset endpoint.
const BuiltinCacheResetPath = "/reset_prompt_cache"

// CanResetCache reports whether an engine of kind has a cache reset.
func CanResetCache(kind string) bool { return cacheResets[kind] != nil }

// ResetCache asks the engine, of family kind, to empty its prompt cache.
// A family without a reset is CacheResetUnsupported; a reset that fails
// (an error status, no answer) is CacheResetFailed with what it answered:
// never a Go error, the pass goes on and says so.
func (c *Client) ResetCache(ctx context.Context, kind string) CacheReset {
	reset, ok := cacheResets[kind]
	if !ok {
		what := kind
		if what == "" {
			what = "an engine of unknown kind"
		}
		return CacheReset{Outcome: CacheResetUnsupported, Detail: what + " has no prompt-cache reset a client can call"}
	}
	return reset(ctx, c)
}

// postReset is a family whose cache one POST empties.
func postReset(path string) cacheResetter {
	return func(ctx context.Context, c *Client) CacheReset {
		status, body, err := c.rawCall(ctx, http.MethodPost, path)
		answer := c.answer(http.MethodPost, path, status, body, err)
		if err != nil || status < 200 || status > 299 {
			return CacheReset{Outcome: CacheResetFailed, Detail: answer}
		}
		return CacheReset{Outcome: CacheResetDone, Detail: answer}
	}
}

// resetLlamaCppSlots erases every slot of a llama-server: GET /slots lists
// them ([{"id":0,...},...]; 501 when started with --no-slots, then /props's
// total_slots says how many), then POST /slots/{id}?action=erase each
// ({"id_slot":0,"n_erased":1234}; 501 unless started with
// --slot-save-path in build b1-de3ff81). Any slot not erased fails the reset.
func resetLlamaCppSlots(ctx context.Context, c *Client) CacheReset {
	ids, listed, err := c.llamaCppSlots(ctx)
	if err != nil {
		return CacheReset{Outcome: CacheResetFailed, Detail: err.Error()}
	}
	var erased int64
	first := ""
	for _, id := range ids {
		path := "/slots/" + strconv.Itoa(id) + "?action=erase"
		status, body, err := c.rawCall(ctx, http.MethodPost, path)
		answer := c.answer(http.MethodPost, path, status, body, err)
		if err != nil || status < 200 || status > 299 {
			return CacheReset{Outcome: CacheResetFailed, Detail: listed + "; " + answer}
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
	return CacheReset{Outcome: CacheResetDone, Detail: fmt.Sprintf("%s; erased %d slots, %d cached tokens in all (first: %s); llama.cpp's host-memory prompt cache (--cache-ram) has no endpoint: start it with --cache-ram 0",
		listed, len(ids), erased, first)}
}

// llamaCppSlots is the ids of a llama-server's slots and how they were
// learnt.
func (c *Client) llamaCppSlots(ctx context.Context) ([]int, string, error) {
	status, body, err := c.rawCall(ctx, http.MethodGet, "/slots")
	listed := c.answer(http.MethodGet, "/slots", status, body, err)
	if err == nil && status == http.StatusOK {
		var slots []struct {
			ID *int `json:"id"`
		}
		if jerr := json.Unmarshal(body, &slots); jerr != nil || len(slots) == 0 {
			return nil, "", fmt.Errorf("GET /slots: 200 without a list of slots: %s", c.clean(truncate(string(body), maxAnswerDetail)))
		}
		ids := make([]int, 0, len(slots))
		for _, s := range slots {
			if s.ID == nil {
				return nil, "", fmt.Errorf("GET /slots: a slot without an id: %s", c.clean(truncate(string(body), maxAnswerDetail)))
			}
			ids = append(ids, *s.ID)
		}
		return ids, fmt.Sprintf("GET /slots: %d slots", len(ids)), nil
	}
	// --no-slots: /props still says how many there are (ids 0..n-1).
	pstatus, pbody, perr := c.rawCall(ctx, http.MethodGet, "/props")
	var props struct {
		TotalSlots int `json:"total_slots"`
	}
	if perr != nil || pstatus != http.StatusOK || json.Unmarshal(pbody, &props) != nil || props.TotalSlots <= 0 {
		return nil, "", fmt.Errorf("%s; %s", listed, c.answer(http.MethodGet, "/props", pstatus, pbody, perr))
	}
	ids := make([]int, props.TotalSlots)
	for i := range ids {
		ids[i] = i
	}
	return ids, fmt.Sprintf("%s; GET /props: total_slots %d", listed, props.TotalSlots), nil
}

// maxAnswerDetail bounds the body an answer's detail quotes.
const maxAnswerDetail = 160

// answer is "POST /flush_cache: 200 {...}": a call and what came back,
// its body short and clean.
func (c *Client) answer(method, path string, status int, body []byte, err error) string {
	if err != nil {
		return c.clean(fmt.Sprintf("%s %s: %v", method, path, err))
	}
	b := strings.Join(strings.Fields(string(body)), " ")
	if len(b) > maxAnswerDetail {
		b = truncate(b, maxAnswerDetail) + "…"
	}
	return c.clean(strings.TrimSpace(fmt.Sprintf("%s %s: %d %s", method, path, status, b)))
}

// rawCall is call without judging the status: a reset's answer is recorded
// whatever it is. It is bounded by the client's CallTimeout.
func (c *Client) rawCall(ctx context.Context, method, path string) (int, []byte, error) {
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, method, c.base+path, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("build %s %s: %w", method, path, c.cleanErr(err))
	}
	c.authorize(req)
	res, _, err := c.do(req, nil)
	if err != nil {
		return 0, nil, c.callError(cctx, start, "send", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return res.StatusCode, nil, c.callError(cctx, start, "read body", err)
	}
	return res.StatusCode, b, nil
}
