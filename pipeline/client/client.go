// Package client is the OpenAI-compatible engine client: it sends one
// streamed chat completion (or one /v1/completions call with a list of
// prompts), reads the server-sent events of vLLM, SGLang, llama.cpp, Ollama
// and TGI, and returns what happened as an extractbench.Response: the instants on
// the run's monotonic Clock, the tokens, the raw output and the transport
// outcome. It also asks an engine what it serves and what it is (Health,
// Models, Describe). It never scores or stores, and retries only what never
// reached the engine (a request a stale pooled connection lost, see do): a
// failed request is a Response whose Transport says why, never a Go error.
// Every string it returns from an engine's bytes is valid UTF-8 and has the
// API key removed (Redactor); it never follows a redirect.
package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/extractbench/extractbench"
)

// DefaultTimeout bounds one request, from send to the last byte, when
// Config.Timeout is zero.
const DefaultTimeout = 120 * time.Second

// DefaultCallTimeout bounds one metadata call (/health, /v1/models, the
// version probes, POST /reset_peaks) when Config.CallTimeout is zero: an
// engine answers them at once or not at all, and one that never answers
// must not hold the run.
const DefaultCallTimeout = 10 * time.Second

// Generation is what every request asks the engine for: the protocol's
// sampling settings and, for guided decoding, the OpenAI response_format
// object (nil: none).
type Generation struct {
	MaxTokens      int
	Temperature    float64
	Seed           *int
	ResponseFormat json.RawMessage
}

// Config says how to reach one engine.
type Config struct {
	BaseURL  string        // e.g. http://127.0.0.1:8000, without /v1
	Model    string        // the served model name sent in every request
	APIKey   string        // sent as a Bearer token; never logged
	Timeout  time.Duration // per request; DefaultTimeout when zero
	MaxConns int           // the highest concurrency the run will use
	// MaxAnswerBytes caps one answer's content (each prompt's, in a batch);
	// past it the request is cancelled as extractbench.TransportTooLarge. Zero:
	// MaxAnswerBytes of each request's max_tokens.
	MaxAnswerBytes int
	// CallTimeout bounds one metadata call; DefaultCallTimeout when zero,
	// and never longer than Timeout.
	CallTimeout time.Duration
	// Dial, when set, opens the client's connections in place of a
	// net.Dialer: how a test makes the client itself fail (out of file
	// descriptors) without exhausting the machine.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// EngineClock says the engine is a simulation on the run's engine
	// clock: each answer's instants are taken from it (engineclock.go).
	EngineClock bool
}

// Client talks to an OpenAI-compatible engine. It is safe for concurrent
// use; one Client serves every level of a run so that connections are
// reused and never re-dialled between requests.
type Client struct {
	cfg   Config
	base  string
	hc    *http.Client // the pool every request goes through
	fresh *http.Client // a new connection per request: do's one retry
	red   *Redactor
}

// New returns a Client with one connection pool sized for
// cfg.MaxConns requests in flight.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	cfg.CallTimeout = min(cfg.CallTimeout, cfg.Timeout)
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	idle := cfg.MaxConns + 4 // health checks and scrapes share the pool
	if idle < 8 {
		idle = 8
	}
	tr := &http.Transport{
		// No proxy: a proxy between client and engine would be measured too.
		Proxy:               nil,
		DialContext:         dial,
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle, // the default 2 would re-dial at every level above 2
		MaxConnsPerHost:     0,    // never queue requests inside the client
		IdleConnTimeout:     90 * time.Second,
		// Compression would buffer the event stream and blur first-byte times.
		DisableCompression: true,
		// HTTP/1.1 only: one request per connection, as engines are tested.
		ForceAttemptHTTP2: false,
		// A request (headers and a prompt of up to a few thousand tokens)
		// goes out in one write, and a stream's events are read in as few
		// reads as they arrive in: net/http's 4 KiB buffers cost a system
		// call per 4 KiB each way.
		WriteBufferSize: writeBufferSize,
		ReadBufferSize:  readBufferSize,
		TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	once := tr.Clone()
	once.DisableKeepAlives = true // the retry's connection is closed after it, never pooled
	return &Client{
		cfg:   cfg,
		base:  strings.TrimSuffix(cfg.BaseURL, "/"),
		hc:    &http.Client{Transport: tr, CheckRedirect: noRedirect},
		fresh: &http.Client{Transport: once, CheckRedirect: noRedirect},
		red:   NewRedactor(cfg.APIKey, URLSecret(cfg.BaseURL)),
	}
}

// The connection buffers of the client's transport (see New): 32 KiB
// holds the request of a long document's prompt; 16 KiB the whole answer
// of most streams, whose events arrive a few hundred bytes at a time.
const (
	writeBufferSize = 32 << 10
	readBufferSize  = 16 << 10
)

// noRedirect keeps a redirect as the answer: following one would turn a
// POST into a bodyless GET (302) or measure another server (307), and send
// the API key to wherever the Location points.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// HTTPClient returns the client's http.Client, for telemetry scrapes that
// should share its transport.
func (c *Client) HTTPClient() *http.Client { return c.hc }

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	// ContinuousUsage asks vLLM and SGLang for each choice's own usage on
	// its chunks, which is how a batch gets per-prompt token counts.
	ContinuousUsage bool `json:"continuous_usage_stats,omitempty"`
}

type generateRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages,omitempty"`
	Prompt         []string        `json:"prompt,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Temperature    float64         `json:"temperature"`
	Seed           *int            `json:"seed,omitempty"`
	Stream         bool            `json:"stream"`
	StreamOptions  streamOptions   `json:"stream_options"`
	ResponseFormat json.RawMessage `json:"response_format,omitempty"`
}

// Chat sends one streamed chat completion and returns what happened. It
// never returns a Go error: a failed request is a Response whose Transport
// says why, with whatever output arrived before the failure.
func (c *Client) Chat(ctx context.Context, clock extractbench.Clock, schedNS int64, system, user string, g Generation) extractbench.Response {
	msgs := make([]chatMessage, 0, 2)
	if system != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: system})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: user})
	req := generateRequest{
		Model: c.cfg.Model, Messages: msgs,
		MaxTokens: g.MaxTokens, Temperature: g.Temperature, Seed: g.Seed,
		Stream: true, StreamOptions: streamOptions{IncludeUsage: true},
		ResponseFormat: g.ResponseFormat,
	}
	x := c.exchange(ctx, clock, schedNS, "/v1/chat/completions", req, 1)
	return x.response(0, true)
}

// exchangeResult is one HTTP exchange: the call-wide timings and transport,
// and the per-choice accumulators.
type exchangeResult struct {
	timings   extractbench.Timings
	transport extractbench.Transport
	acc       *streamAcc
	red       *Redactor // the client's: content is an engine's bytes too
}

// response builds the Response of choice i. single says the call had one
// prompt, so the call's total usage is that prompt's own.
func (x *exchangeResult) response(i int, single bool) extractbench.Response {
	r := extractbench.Response{Timings: x.timings, Transport: x.transport}
	x.acc.fill(&r, i, single, x.red)
	return r
}

// exchange POSTs payload to path and reads the answer, streamed or not,
// into n choices.
func (c *Client) exchange(ctx context.Context, clock extractbench.Clock, schedNS int64, path string, payload any, n int) *exchangeResult {
	x := &exchangeResult{acc: c.newAcc(clock, payload, n), red: c.red}
	x.timings.SchedNS = schedNS
	defer func() {
		if x.timings.DoneNS == 0 {
			x.timings.DoneNS = clock.Now()
		}
	}()

	body, err := json.Marshal(payload)
	if err != nil {
		x.transport = extractbench.Transport{Kind: extractbench.TransportOther, Detail: "encode request: " + err.Error()}
		return x
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		x.transport = extractbench.Transport{Kind: extractbench.TransportOther, Detail: c.clean("build request: " + err.Error())}
		return x
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream, application/json")
	req.Header.Set("Accept-Encoding", "identity") // said, not only implied by DisableCompression
	c.authorize(req)
	setLockstep(ctx, req)

	x.timings.SendNS = clock.Now()
	res, lost, err := c.do(req, func() { x.timings.SendNS = clock.Now() })
	if lost != nil {
		x.transport.Detail = c.clean(retriedNote(lost))
	}
	if err != nil {
		t := c.failure(ctx, rctx, "send request", err)
		t.Detail = joinDetail(t.Detail, x.transport.Detail)
		x.transport = t
		return x
	}
	defer res.Body.Close()
	if c.cfg.EngineClock {
		defer x.useEngineClock(res) // after the body is read: its trailer
	}
	x.transport.HTTPStatus = res.StatusCode
	fb := &firstByteReader{r: res.Body, clock: clock, at: &x.timings.FirstByteNS}
	br := bodyReaders.Get().(*bufio.Reader)
	br.Reset(fb)
	defer func() {
		br.Reset(nil) // drop the body so the pool does not keep it alive
		bodyReaders.Put(br)
	}()

	if res.StatusCode < 200 || res.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(br, maxErrorBody))
		x.transport.Kind = extractbench.TransportHTTPStatus
		x.transport.ErrorBody = c.clean(string(b))
		x.transport.Detail = joinDetail(c.clean(statusDetail(res, b)), x.transport.Detail)
		x.acc.rejectedPrompt = errorPromptTokens(b)
		return x
	}
	if f := encodingFault(res.Header.Get("Content-Encoding")); f != nil {
		x.setFault(c, f)
		return x
	}
	switch bodyFormat(res.Header.Get("Content-Type"), br) {
	case formatSSE:
		c.readSSE(ctx, rctx, br, x)
	case formatJSON:
		c.readJSON(ctx, rctx, br, x)
	default:
		b, _ := br.Peek(200)
		x.transport.Kind = extractbench.TransportContentType
		x.transport.Detail = joinDetail(c.clean(fmt.Sprintf("200 with Content-Type %q, not an event stream: %q",
			res.Header.Get("Content-Type"), truncate(string(b), 120))), x.transport.Detail)
	}
	x.timings.DoneNS = clock.Now()
	if x.transport.Kind == extractbench.TransportOK {
		// Read what follows [DONE] (the final empty chunk of chunked
		// encoding) so that the connection goes back to the pool instead of
		// being closed and re-dialled by the next request.
		drain(br, drainLimit)
	}
	return x
}

// drain reads and discards up to limit bytes of br, until EOF or an error.
func drain(br *bufio.Reader, limit int) {
	for limit > 0 {
		if _, err := br.Peek(1); err != nil {
			return
		}
		n, _ := br.Discard(min(br.Buffered(), limit))
		limit -= n
	}
}

// drainLimit bounds what is read after [DONE] to keep a connection.
const drainLimit = 64 << 10

// bodyReaders recycles the 64 KiB readers of response bodies: allocating
// and clearing one per request was most of a request's garbage. Nothing
// read through one outlives its exchange (events and bodies are copied).
var bodyReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func (c *Client) readSSE(ctx, rctx context.Context, r io.Reader, x *exchangeResult) {
	sr := newSSEReader(r)
	sr.borrow = true // consume copies what it keeps
	sr.maxEvent = x.acc.lim.event
	for !x.acc.done {
		ev, err := sr.Next()
		switch {
		case errors.Is(err, io.EOF):
			x.transport.Kind = extractbench.TransportCut
			x.transport.Detail = joinDetail(x.acc.cutDetail(), x.transport.Detail)
			return
		case errors.Is(err, errTooLarge):
			x.setFault(c, x.acc.lim.tooLarge("one event passed "+x.acc.lim.eventCapText(sr.maxEvent)+" before its end"))
			return
		case errors.Is(err, errIncompleteEvent):
			x.transport.Kind = extractbench.TransportCut
			x.transport.Detail = joinDetail("stream ended inside an event, before [DONE]", x.transport.Detail)
			return
		case errors.Is(err, errSSESyntax):
			x.transport.Kind = extractbench.TransportMalformed
			x.transport.Detail = joinDetail(c.clean(err.Error()), x.transport.Detail)
			return
		case err != nil:
			x.transport = c.failure(ctx, rctx, "read stream", err, x.transport.HTTPStatus)
			return
		}
		if f := x.acc.consume(ev.Name, ev.Data); f != nil {
			x.setFault(c, f)
			return
		}
	}
}

// readJSON accepts a non-streamed answer: some servers ignore stream:true.
// The body is read up to its cap (limits.body), never whole.
func (c *Client) readJSON(ctx, rctx context.Context, r io.Reader, x *exchangeResult) {
	b, err := io.ReadAll(io.LimitReader(r, int64(x.acc.lim.body)+1))
	if err != nil {
		x.transport = c.failure(ctx, rctx, "read body", err, x.transport.HTTPStatus)
		return
	}
	if len(b) > x.acc.lim.body {
		x.setFault(c, x.acc.lim.tooLarge("non-streamed body passed "+x.acc.lim.eventCapText(x.acc.lim.body)))
		return
	}
	if f := x.acc.consume("", b); f != nil {
		x.setFault(c, f)
		return
	}
	x.acc.done = true
}

func (x *exchangeResult) setFault(c *Client, f *streamFault) {
	x.transport.Kind = f.kind
	x.transport.Detail = joinDetail(c.clean(f.detail), x.transport.Detail)
	if f.body != "" {
		x.transport.ErrorBody = c.clean(f.body)
	}
	if f.status != 0 {
		x.transport.HTTPStatus = f.status
	}
}

type format int

const (
	formatOther format = iota
	formatSSE
	formatJSON
)

// bodyFormat decides how to read a 2xx body: by its media type, else by its
// first bytes (some servers send an event stream as text/plain).
func bodyFormat(contentType string, br *bufio.Reader) format {
	if rest, ok := strings.CutPrefix(contentType, "text/event-stream"); ok && (rest == "" || rest[0] == ';') {
		return formatSSE // what mime.ParseMediaType would say, without its allocations
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "text/event-stream":
		return formatSSE
	case "application/json":
		return formatJSON
	case "text/html", "application/xhtml+xml":
		return formatOther
	}
	head, _ := br.Peek(16)
	head = bytes.TrimLeft(head, " \t\r\n")
	for _, p := range []string{"data:", "event:", ":", "id:", "retry:"} {
		if bytes.HasPrefix(head, []byte(p)) {
			return formatSSE
		}
	}
	if bytes.HasPrefix(head, []byte("{")) {
		return formatJSON
	}
	return formatOther
}

// failure turns a Go error from the HTTP exchange into a Transport. parent
// is the caller's context (canceled: the run was interrupted); rctx carries
// the per-request timeout.
func (c *Client) failure(parent, rctx context.Context, doing string, err error, status ...int) extractbench.Transport {
	t := extractbench.Transport{Kind: classifyError(parent, rctx, err), Detail: c.clean(doing + ": " + err.Error())}
	if len(status) > 0 {
		t.HTTPStatus = status[0]
	}
	return t
}

func classifyError(parent, rctx context.Context, err error) extractbench.TransportKind {
	var ne net.Error
	switch {
	case parent.Err() != nil:
		return extractbench.TransportInterrupted
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		return extractbench.TransportTimeout
	case clientSide(err):
		return extractbench.TransportClient
	case errors.Is(err, syscall.ECONNREFUSED):
		return extractbench.TransportRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF):
		return extractbench.TransportReset
	case errors.As(err, &ne) && ne.Timeout():
		return extractbench.TransportTimeout
	}
	return extractbench.TransportOther
}

func (c *Client) authorize(req *http.Request) {
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
}

// clean makes text from an engine's bytes fit to store and print: valid
// UTF-8 (an invalid byte becomes U+FFFD; DuckDB refuses a Parquet string
// column that is not UTF-8) and without the API key in any encoding, nor a
// URL's userinfo.
func (c *Client) clean(s string) string { return cleanText(c.red, s) }

func cleanText(red *Redactor, s string) string { return red.Redact(validUTF8(s)) }

// validUTF8 is s with each invalid byte as U+FFFD; no copy when valid.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// firstByteReader records when the first body byte was read.
type firstByteReader struct {
	r     io.Reader
	clock extractbench.Clock
	at    *int64
}

func (f *firstByteReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && *f.at == 0 {
		*f.at = f.clock.Now()
	}
	return n, err
}
