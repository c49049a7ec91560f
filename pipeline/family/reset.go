package family

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Reset is how a family's prompt (prefix) cache is emptied before a
// measured pass.
type Reset struct {
	// Do empties the cache through c; nil: the family has none a client
	// can call.
	Do func(ctx context.Context, c Caller) ResetResult
	// Note says why there is none, or what the reset does not reach.
	Note string
}

// ResetResult is what one engine answered to a reset.
type ResetResult struct {
	Done bool // the engine said it emptied its cache
	// Detail is what was asked and what the engine answered (statuses and
	// short bodies, cleaned), or what failed.
	Detail string
}

// CanReset reports whether the family has a cache reset a client can call.
func (f *Family) CanReset() bool { return f != nil && f.Reset.Do != nil }

// postReset is a reset that one POST does.
func postReset(path string) func(context.Context, Caller) ResetResult {
	return func(ctx context.Context, c Caller) ResetResult {
		status, body, err := c.Ask(ctx, http.MethodPost, path)
		return ResetResult{Done: err == nil && ok2xx(status), Detail: Answer(c, http.MethodPost, path, status, body, err)}
	}
}

func ok2xx(status int) bool { return status >= 200 && status <= 299 }

// maxAnswerDetail bounds the body an answer's detail quotes.
const maxAnswerDetail = 160

// Answer is "POST /flush_cache: 200 {...}": a call and what came back,
// its body on one line, short and clean; or the call and its error.
func Answer(c Caller, method, path string, status int, body []byte, err error) string {
	if err != nil {
		return c.Clean(fmt.Sprintf("%s %s: %v", method, path, err))
	}
	b := strings.Join(strings.Fields(string(body)), " ")
	if len(b) > maxAnswerDetail {
		b = short(b, maxAnswerDetail) + "…"
	}
	return c.Clean(strings.TrimSpace(fmt.Sprintf("%s %s: %d %s", method, path, status, b)))
}

// short cuts s to at most n bytes, on a rune boundary.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
