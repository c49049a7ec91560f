package extractbench

import "slices"

// Failure is the class of a document that was not accepted, chosen by the
// precedence of MEASUREMENT.md section 6: memory, truncation, format, quality;
// other transport failures are Error. An accepted document has None.
//
// A new class is two files: its constant and its place in failureOrder
// here, and the rule that gives it in eval (classify.go). Nothing else
// lists the classes: the store's passes column failures_<class> is added
// when a database is opened (no migration), SCHEMA.md documents them with
// one row, and the tables, reports and tests loop over Failures.
type Failure string

// The failure classes. The strings are stored as is in SQLite and Parquet.
const (
	None       Failure = ""
	Memory     Failure = "memory"
	Truncation Failure = "truncation"
	Format     Failure = "format"
	Quality    Failure = "quality"
	Error      Failure = "error"
)

// failureOrder is the failure classes in precedence order, as an array so
// that FailureCounts takes its length.
var failureOrder = [...]Failure{Memory, Truncation, Format, Quality, Error}

// Failures lists the failure classes in precedence order.
var Failures = failureOrder[:]

// Short is the class's label in a narrow table ("3 mem 1 qual"): its first
// letters, the name itself for a class without one.
func (f Failure) Short() string {
	switch f {
	case Memory:
		return "mem"
	case Truncation:
		return "trunc"
	case Format:
		return "fmt"
	case Quality:
		return "qual"
	case Error:
		return "err"
	}
	return string(f)
}

// ParseRule says which parse decides acceptance: strict or lenient.
type ParseRule string

// The two parse rules of MEASUREMENT.md section 7.
const (
	Strict  ParseRule = "strict"
	Lenient ParseRule = "lenient"
)

// TransportKind names what went wrong between client and engine, when
// something did. The empty kind means a complete stream ended by [DONE] (or a
// complete non-streamed body).
type TransportKind string

// The transport failure kinds the engine client reports.
const (
	TransportOK          TransportKind = ""
	TransportHTTPStatus  TransportKind = "http_status"   // a non-2xx answer; see HTTPStatus and ErrorBody
	TransportTimeout     TransportKind = "timeout"       // the per-request timeout fired
	TransportReset       TransportKind = "reset"         // connection reset or EOF mid-response
	TransportRefused     TransportKind = "refused"       // connection refused
	TransportMalformed   TransportKind = "malformed_sse" // a line or chunk that is not valid SSE / JSON
	TransportCut         TransportKind = "stream_cut"    // the stream ended before [DONE]
	TransportContentType TransportKind = "content_type"  // a 200 whose body is not an event stream or JSON (an HTML page, a compressed body)
	TransportTooLarge    TransportKind = "too_large"     // the answer, one event or a non-streamed body passed the client's cap (max_answer_bytes): the client cancelled the request
	TransportInterrupted TransportKind = "interrupted"   // the run was interrupted and cancelled the request: not a measurement, nor a failure of the engine
	TransportClient      TransportKind = "client"        // the client ran out of its own resources (file descriptors, ports, buffers): the engine never saw the request; not a measurement, nor a failure of the engine
	TransportOther       TransportKind = "transport"     // any other client-side error
	// TransportEngineDead: the request was in flight, or failed, when the
	// engine died without evidence of running out of memory (killed from
	// outside, restarting, gone): not a measurement of the model; -resume
	// sends it again.
	TransportEngineDead TransportKind = "engine_dead"
)

// Measured reports whether a request of kind k measured the engine: every
// kind but the run's own interruption, the client's own failure and an
// engine that died without memory evidence, which no figure of the engine
// counts (no failure class, left out of the pass, sent again by -resume).
func (k TransportKind) Measured() bool { return !slices.Contains(Unmeasured, k) }

// Unmeasured are the kinds Measured refuses.
var Unmeasured = []TransportKind{TransportInterrupted, TransportClient, TransportEngineDead}

// Transport is everything the engine client observed about one request that
// the classifier needs: the HTTP answer, the stream's end and any error.
type Transport struct {
	HTTPStatus   int           // 0 when no response arrived
	ErrorBody    string        // body of a non-2xx answer (or the in-stream error object), at most 4 KiB
	FinishReason string        // "stop", "length", ... as the engine sent it; "" when none
	Kind         TransportKind // TransportOK when the exchange completed
	Detail       string        // the Go error or a short human reason; never an API key
	EngineDied   bool          // set by the runner: the engine process had exited or stopped answering health checks
}

// Served reports whether the engine served the request through: the
// exchange completed with a 2xx answer (or the in-process engine's, which
// has no status) and no error object, whatever the answer says and however
// it finished (finish_reason=length included). What an engine completes per
// second counts these only: a request it refused at once (HTTP 429, a 503)
// took none of its capacity, however fast it came back.
func (t Transport) Served() bool {
	return t.Kind == TransportOK && t.ErrorBody == "" && (t.HTTPStatus == 0 || t.HTTPStatus >= 200 && t.HTTPStatus < 300)
}

// Timings are monotonic instants of one request, in nanoseconds since the
// run's clock origin (Clock). Zero means the instant never happened
// (no first byte, no content token...), and is stored as NULL.
type Timings struct {
	SchedNS      int64 // when the dispatcher meant to send it
	SendNS       int64 // just before the request was written
	FirstByteNS  int64 // first byte of the response body
	FirstTokenNS int64 // first SSE chunk with non-empty content (a role-only chunk is not a token)
	LastTokenNS  int64 // last chunk with non-empty content
	DoneNS       int64 // the response was fully read, or failed
}

// Response is what the engine client returns for one document: timings,
// token counts, the raw output and the transport outcome. Nothing is scored yet.
type Response struct {
	Timings
	PromptTokens     int  // from the engine's usage; 0 if unknown
	CompletionTokens int  // from the engine's usage, else counted client-side (see UsageReported)
	UsageReported    bool // false: the engine sent no usage; CompletionTokens counts content chunks
	ClientChunks     int  // content-bearing chunks the client counted, whatever the engine reported
	// CachedPromptTokens are the prompt tokens the engine did not compute
	// but took from its prompt cache (usage.prompt_tokens_details.
	// cached_tokens, or llama.cpp's timings.cache_n); nil when the engine
	// did not say.
	CachedPromptTokens *int
	Output             string // the raw content, concatenated as streamed
	// UsageRefused says what impossible usage the engine sent, when
	// RefuseImpossibleUsage refused it (UsageReported is then false); ""
	// when it did not. It is not stored: the pass records it as an event.
	UsageRefused string
	Transport
}

// Record is the one record of a request that flows from the dispatcher to
// the scorer to SQLite to Parquet, unchanged in meaning. A failed document
// is a Record with a Failure, never a Go error.
type Record struct {
	RunID       string
	Variant     string
	Mode        Mode // ModeConcurrency, ModeBatch, ModeRate or ModeContext
	Level       int  // concurrency, batch size, requests per second, or a context sweep's length class (LengthClassOf)
	Repetition  int  // 1-based
	DocID       string
	LengthClass string
	Response
	Score
	// OnTime says whether the request met every latency objective of the
	// protocol (Acceptance.OnTime); nil when not judged (rows written
	// before schema version 5).
	OnTime *bool
	// ExpectedPromptTokens is the prompt_tokens the request should have had
	// (PromptDrift): its prompt as the model's tokenizer and chat template
	// count it, or what the baseline variant of the same model reported for
	// the document; nil when nothing says.
	ExpectedPromptTokens *int
	// Endpoint is the engine replica the request was sent to: the URL as
	// the protocol writes it (engine.url, or one of engine.urls), "builtin"
	// for the in-process engine; "" when unknown (rows written before
	// schema version 6).
	Endpoint string
}

// TPOT is MEASUREMENT.md's time per output token after the first:
// (last token − first token) / the tokens generated between those two
// instants, TPOTSteps; ok is false when it is undefined (no step, or no
// time between a first and a last content token). results' tpot_ns column
// and the pass percentiles (results.passLatencies, in SQL) are this
// definition.
func (r *Record) TPOT() (ns int64, ok bool) {
	steps := r.TPOTSteps()
	span, ok := Span(r.FirstTokenNS, r.LastTokenNS)
	if steps < 1 || !ok || span == 0 {
		return 0, false
	}
	return span / int64(steps), true
}

// TPOTSteps is what TPOT divides by: the tokens generated after the first
// content token up to the last one, completion_tokens − 1, except where the
// engine counted a token it never streamed. llama.cpp and vLLM count the
// end-of-generation token in completion_tokens, while no chunk carries it
// (it has no text): a stream that finished with "stop" and whose content
// chunks number completion_tokens − 1 sent one token a chunk and that one
// unsent, so its last content token is token completion_tokens − 1, and
// completion_tokens − 1 would be a step too many (4% low on a 26-token
// answer). It then divides by the content chunks − 1. Any other count
// (usage not reported, a length cut, chunks that carry several tokens)
// keeps completion_tokens − 1.
func (r *Record) TPOTSteps() int {
	if r.UsageReported && r.FinishReason == "stop" && r.ClientChunks == r.CompletionTokens-1 {
		return r.ClientChunks - 1
	}
	return r.CompletionTokens - 1
}

// FailureCounts counts documents per failure class, indexed in Failures
// order. It is an array so that a pass row can point at each count (one
// column per class).
type FailureCounts [len(failureOrder)]int64

// Index is the position of f in Failures, or -1 for None or an unknown class.
func (f Failure) Index() int {
	for i, x := range Failures {
		if x == f {
			return i
		}
	}
	return -1
}

// Add counts one document of class f; None and unknown classes are ignored.
func (c *FailureCounts) Add(f Failure, n int64) {
	if i := f.Index(); i >= 0 {
		c[i] += n
	}
}

// Of returns the count of class f.
func (c FailureCounts) Of(f Failure) int64 {
	if i := f.Index(); i >= 0 {
		return c[i]
	}
	return 0
}

// Plus returns the element-wise sum of c and o.
func (c FailureCounts) Plus(o FailureCounts) FailureCounts {
	for i := range c {
		c[i] += o[i]
	}
	return c
}

// Total is the number of failed documents.
func (c FailureCounts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}
