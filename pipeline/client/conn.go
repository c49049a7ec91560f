package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"syscall"
)

// do sends req through the pool. A request that fails on a reused idle
// connection before any byte of an answer arrived is sent once more, on a
// new connection, and lost is that first failure (nil when there was no
// retry); beforeRetry, when set, runs just before the second send.
//
// Why: a server may close a kept-alive connection while it sits in the
// pool (llama-server closes it after every streamed answer although it
// sends Keep-Alive: timeout=5, max=100), and the next request written on it
// reads EOF. Such a request never reached a server that could answer it,
// and net/http does not send a POST again by itself. A request that fails
// on a new connection, or after the first byte of an answer, is the
// engine's and is never sent again.
func (c *Client) do(req *http.Request, beforeRetry func()) (res *http.Response, lost, err error) {
	t := &connTrace{}
	t.GotConn = func(i httptrace.GotConnInfo) {
		// Any connection not dialled for this request can have been closed
		// under it: one reused, and one that only sat in the pool (dialled
		// for another request that got an older connection first: the
		// H200 run at level 8 lost such requests as "server closed idle
		// connection"). net/http may also try a second pooled connection
		// itself; one stale connection on the way is enough.
		if i.Reused || i.WasIdle {
			t.stale.Store(true)
		}
	}
	t.GotFirstResponseByte = func() { t.answered.Store(true) }
	ctx := req.Context()
	res, err = c.hc.Do(req.WithContext(httptrace.WithClientTrace(ctx, &t.ClientTrace)))
	if err == nil || !t.stale.Load() || t.answered.Load() || ctx.Err() != nil {
		return res, nil, err
	}
	again := req.Clone(ctx)
	if req.GetBody != nil {
		body, gerr := req.GetBody()
		if gerr != nil {
			return nil, nil, err
		}
		again.Body = body
	}
	if beforeRetry != nil {
		beforeRetry()
	}
	res, err2 := c.fresh.Do(again)
	return res, err, err2
}

// connTrace is what do learns of the connection a request went on: a
// reused idle one (stale: the server may have closed it), and whether any
// byte of an answer came back on it.
type connTrace struct {
	httptrace.ClientTrace
	stale, answered atomic.Bool
}

// retriedNote is the transport detail that says a request was sent twice,
// lost being what the first attempt met.
func retriedNote(lost error) string {
	return fmt.Sprintf("sent again on a new connection: the pooled one the server had closed failed before any answer (%v)", lost)
}

// joinDetail appends note (do's retry, when there was one) to detail.
func joinDetail(detail, note string) string {
	switch {
	case note == "":
		return detail
	case detail == "":
		return note
	}
	return detail + "; " + note
}

// statusDetail is the short reason of a non-2xx answer: the engine's
// message, or for a redirect where it pointed (never followed).
func statusDetail(res *http.Response, body []byte) string {
	if res.StatusCode >= 300 && res.StatusCode <= 399 {
		return fmt.Sprintf("HTTP %d: redirect to %q, not followed (a redirect would send the request, and the API key, elsewhere)",
			res.StatusCode, truncate(res.Header.Get("Location"), 300))
	}
	return fmt.Sprintf("HTTP %d: %s", res.StatusCode, errorMessage(body))
}

// clientSide reports whether err is the client's own failure, out of a
// resource of this machine (file descriptors, buffers, ports, memory):
// the engine never saw the request, so it is no figure of the engine's.
func clientSide(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.EADDRNOTAVAIL, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
