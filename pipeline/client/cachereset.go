package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/extractbench/extractbench/pipeline/family"
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

// ResetCache asks the engine, of family f (nil: unknown), to empty its
// prompt cache the family's way (family.Reset). A family without a reset is
// CacheResetUnsupported, and nothing is sent; a reset that fails (an error
// status, no answer) is CacheResetFailed with what it answered: never a Go
// error, the pass goes on and says so.
func (c *Client) ResetCache(ctx context.Context, f *family.Family) CacheReset {
	if !f.CanReset() {
		if f == nil {
			f = family.Generic
		}
		return CacheReset{Outcome: CacheResetUnsupported, Detail: f.Label() + " has no prompt-cache reset a client can call: " + f.Reset.Note}
	}
	r := f.Reset.Do(ctx, c)
	if !r.Done {
		return CacheReset{Outcome: CacheResetFailed, Detail: r.Detail}
	}
	return CacheReset{Outcome: CacheResetDone, Detail: r.Detail}
}

// Ask sends method path without a body and returns the status and body
// (up to 1 MiB) whatever the status, within the client's CallTimeout: a
// family's own calls (family.Caller), whose answers are recorded as they
// are. err, cleaned, is a call that got no answer.
func (c *Client) Ask(ctx context.Context, method, path string) (int, []byte, error) {
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

// Clean is an engine's text made safe to store: the client's secrets
// redacted, control characters out (family.Caller).
func (c *Client) Clean(s string) string { return c.clean(s) }
