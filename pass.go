package extractbench

import "fmt"

// The pass phases and statuses stored in passes.
const (
	PhaseBaseline = "baseline"
	PhaseSweep    = "sweep"
	PhaseRetry    = "retry" // a lower level tried after a failure; see decisions
	// PhaseProbe is an auto rate sweep's saturation probe: a pass at a rate
	// far above capacity that measures the saturated throughput the sweep's
	// rates are spaced up to (see decisions, auto_levels). A recorded pass,
	// shown, but not a step of the recommendation's walk.
	PhaseProbe = "probe"

	PassComplete    = "complete"
	PassInterrupted = "interrupted"
)

// The batch transports stored in passes.batch_transport.
const (
	TransportCompletionsList = "completions_list" // one /v1/completions call with a list of prompts
	TransportBarrier         = "barrier"          // N chat requests released together, the next batch after all N end
)

// LengthClasses are a context sweep's levels in order: level i + 1 is
// LengthClasses[i] (the corpus's length classes, shortest first).
var LengthClasses = []string{"short", "usual", "long"}

// LengthClassOf is the length class a context sweep's level names ("" when
// none does).
func LengthClassOf(level int) string {
	if level < 1 || level > len(LengthClasses) {
		return ""
	}
	return LengthClasses[level-1]
}

// Pass is one row of the passes table: the aggregates of one (variant, mode,
// level, repetition) over the whole corpus. Pointer fields are nullable: nil
// means unknown or undefined (no engine metrics, no request with a first
// token, duration 0), never zero. Durations and instants are nanoseconds on
// the run's monotonic clock; memory is bytes.
type Pass struct {
	RunID      string
	Variant    string
	Mode       Mode // ModeConcurrency, ModeBatch, ModeRate or ModeContext
	Level      int
	Repetition int // 1-based

	Phase           string // PhaseBaseline, PhaseSweep, PhaseRetry or PhaseProbe
	Attempt         int    // 1 for a planned pass; n+1 for the n-th retry in a chain of retries
	RetryOf         *int64 // the level whose failure this pass retries at a lower level; nil for a planned pass
	RequestedBatch  *int64 // batch size asked for; nil in concurrency mode
	SentConcurrency int64  // most requests in flight from the client
	BatchTransport  string // TransportCompletionsList, TransportBarrier, or "" (NULL) in concurrency mode
	Status          string // PassComplete or PassInterrupted
	StartedNS       *int64 // first t_send
	EndedNS         *int64 // last t_done
	DurationNS      int64  // active time: first send to last done of each segment (resume), summed; ≤ EndedNS − StartedNS; 0 when no request was sent (eval/throughput.go)

	Docs      int64
	Accepted  int64         // accepted documents (a count; requests.accepted is a flag)
	Failures  FailureCounts // documents per failure class, stored as failures_<class>
	UniqueIDs int64         // accepted documents counted once by id

	TTFTN     int64 // requests the TTFT figures rest on
	TTFTP50NS *int64
	TTFTP90NS *int64
	TTFTP95NS *int64
	TTFTP99NS *int64
	TTFTMinNS *int64
	TTFTMaxNS *int64

	E2EN     int64 // requests the E2E figures rest on
	E2EP50NS *int64
	E2EP90NS *int64
	E2EP95NS *int64
	E2EP99NS *int64
	E2EMinNS *int64
	E2EMaxNS *int64

	E2ESchedP95NS      *int64 // from t_sched: includes client-side queueing (coordinated omission)
	ClientQueueP95NS   *int64
	TPOTP50NS          *int64
	EngineQueueMeanNS  *int64 // engine-side, from vllm:request_queue_time_seconds deltas
	ObservedMaxRunning *int64 // peak of the engine's running requests
	ObservedMaxWaiting *int64
	Preemptions        *int64

	OutputTokens       int64
	UsageReportedShare *float64 // share of requests whose tokens came from the engine's usage
	OutputTokensPerS   *float64
	AcceptedPerS       *float64
	DocsPerHour        *float64 // accepted documents per hour
	DateF1             *float64
	AmountF1           *float64
	CategoryF1         *float64

	PeakGPUMemBytes         *int64
	PeakTorchAllocatedBytes *int64
	PeakTorchReservedBytes  *int64
	PeakKVUsage             *float64 // fraction 0–1

	Verdict       string // "" (NULL) until judged
	VerdictReason string

	// PromptTokens are the pass's prompt tokens (engine usage); prompt,
	// output and total tokens per second divide by the pass duration.
	PromptTokens     int64
	PromptTokensPerS *float64
	TotalTokensPerS  *float64

	// EngineCaptures is how many CUDA graphs the engine captured (or kernels
	// it compiled) during the pass, from engine_graph_captures_total; a pass
	// where it is above 0 was not in steady state. nil: not exposed.
	EngineCaptures *int64
	// OutputsChanged counts the documents whose raw output differs from the
	// level-1 pass of the same variant and repetition (batch invariance at
	// temperature 0); VerdictsChanged those of them whose verdict (accepted
	// or not) changed too. nil for the level-1 pass itself, or when it has no
	// complete counterpart.
	OutputsChanged  *int64
	VerdictsChanged *int64

	// TokenCountMismatches counts the requests whose engine-reported
	// completion_tokens and client-counted content chunks differ beyond
	// pipeline's tolerance; nil when no request had the engine's usage.
	TokenCountMismatches *int64

	// Load as it arrived and as it was sent (schema version 5; nil in rows
	// written before it). Lateness is t_send − t_sched of each request.
	OfferedRate   *float64 // rate mode: (requests − 1) / (last − first planned arrival), per second; nil otherwise
	AchievedRate  *float64 // (requests − 1) / (last − first t_send), sends per second; nil under 2 sends
	LatenessP50NS *int64
	LatenessP99NS *int64

	// The client's self-check: its own delay (t_send − the instant the
	// request could go: planned and a slot free), its CPU time over the pass
	// and the share of the machine's cores it used. ClientBound flags a pass
	// whose client could not keep the schedule; it is never the basis of a
	// recommendation.
	ClientDelayP99NS *int64
	ClientCPUNS      *int64
	ClientCPUShare   *float64
	ClientBound      *bool

	// Per-token latency tails and the TTFT objective's figure (from t_sched).
	TPOTP90NS      *int64
	TPOTP99NS      *int64
	TTFTSchedP99NS *int64

	// Latency objectives with quality: requests on time (every objective
	// met), accepted documents on time, and goodput, accepted on-time
	// documents per second of the pass.
	OnTime         *int64
	OnTimeAccepted *int64
	Goodput        *float64

	// Replicas (engine.urls): how many endpoints the variant spreads its
	// requests over, and the fewest and most requests of the pass one of
	// them received (an endpoint that received none counts 0): the spread
	// of the least-loaded dispatch. Set for every pass written since schema
	// version 6 (1, docs, docs for a variant of one engine).
	Endpoints           *int64
	EndpointRequestsMin *int64
	EndpointRequestsMax *int64

	// TelemetrySamples is how many times the engine's metrics were scraped
	// (all replicas at one tick counting once) while the pass's requests
	// ran: what ObservedMaxRunning, ObservedMaxWaiting and PeakKVUsage rest
	// on. Fewer than 2 flags a pass whose peaks rest on one instant or
	// none (then nil); nil when the engine has no metrics endpoint.
	TelemetrySamples *int64
	// Prompt cache: the prompt tokens the engine took from its prompt cache
	// over the requests that reported it (Response.CachedPromptTokens),
	// and their share of those requests' prompt tokens; nil when no request
	// of the pass reported it (schema version 9).
	CachedPromptTokens *int64
	CachedPromptShare  *float64
	// CacheReset is what became of the engine's prompt cache before the
	// pass (schema version 13): "reset" (the engine said it emptied it),
	// "kept" (the protocol's cache: keep), "unsupported" (its family has no
	// reset a client can call), "failed: " and why; "" (NULL) in rows
	// written before.
	CacheReset string

	// PromptDrift is how the engine's prompt_tokens compare with the count
	// each request was expected to have (Record.ExpectedPromptTokens):
	// the model's tokenizer, or the baseline variant of the same model
	// (schema version 10).
	PromptDrift PromptDrift
	// Steady state without the engine's help (eval/steady.go): the pass's
	// requests cut into time blocks, its first block against the others
	// (schema version 13): the requests the blocks hold, how many blocks,
	// the first block's median E2E-to-class ratio over the others' median,
	// less 1 (SteadyTrendEffect), and the highest other block's, less 1
	// (SteadySpread); Steady is false when the first block is beyond the
	// others' spread and the floors. nil when too few blocks (or a row from
	// before). SteadyTrendZ is the per-request Mann-Whitney z of the test
	// before version 13, kept for older rows (nil since).
	SteadyTrendN      *int64
	SteadyTrendZ      *float64
	SteadyTrendEffect *float64
	SteadyBlocks      *int64
	SteadySpread      *float64
	Steady            *bool
	// OrderSeed is the seed of the order the pass sent its documents in
	// (pipeline/dispatch.OrderSeed: sweep.order shuffle); nil for corpus
	// order (sweep.order corpus, or a row from before the option).
	OrderSeed *int64
	// SteadyHead is the pass's head: its first wave and the SteadyMinBlock
	// requests after it, their median E2E-to-class ratio, each class's
	// median over the requests after the head (eval.SteadyBlocksOf). The
	// level compares its first repetition's head with the others' at the
	// same places; nil when the pass was too small (or a row from before).
	SteadyHead *float64

	// CategoryConfusion is the pass's category confusion matrix as JSON:
	// {"expected": {"predicted": count}}, with "null" for JSON null and
	// "invalid" for a value outside the enum; "" (NULL) when not computed.
	CategoryConfusion string

	// Fields is the pass's figures per field, in the protocol's order
	// (results' pass_fields, schema version 16): the default fields'
	// F1 equal DateF1, AmountF1 and CategoryF1. Nil for a pass whose
	// records carry no field scores (rows written before).
	Fields []PassField `json:",omitempty"`
}

// Complete reports whether the pass covered the whole corpus; interrupted
// passes are left out of every figure and verdict ("" reads as complete,
// as rows written before the column had a value).
func (p *Pass) Complete() bool { return p.Status == "" || p.Status == PassComplete }

// GoodAccepted is the accepted documents that were on time; a row written
// before on-time was judged counts every accepted document.
func (p *Pass) GoodAccepted() int64 {
	if p.OnTimeAccepted == nil {
		return p.Accepted
	}
	return *p.OnTimeAccepted
}

// Share is the pass's accepted share; failed documents stay in the
// denominator. A pass with no documents has share 0.
func (p *Pass) Share() float64 {
	if p.Docs <= 0 {
		return 0
	}
	return float64(p.Accepted) / float64(p.Docs)
}

// PassKey names one pass: one (variant, mode, level, repetition) of a run
// over the whole corpus.
type PassKey struct {
	RunID      string
	Variant    string
	Mode       Mode
	Level      int
	Repetition int
}

// PassKeyOf returns the pass rec belongs to.
func PassKeyOf(rec Record) PassKey {
	return PassKey{RunID: rec.RunID, Variant: rec.Variant, Mode: rec.Mode, Level: rec.Level, Repetition: rec.Repetition}
}

func (k PassKey) String() string {
	return fmt.Sprintf("%s/%s/%s/level=%d/rep=%d", k.RunID, k.Variant, k.Mode, k.Level, k.Repetition)
}

// SentConcurrency is a pass's sent_concurrency: the most requests its
// clients had in flight at once (maxInFlight, read from the records'
// t_send and t_done), bounded by what the mode lets each of shards clients
// have in flight: level requests (level prompts of a batch; in a context
// sweep, the sweep's fixed concurrency). Two records of one slot may
// overlap by a clock tick (a slot's next send in the same nanosecond as its
// last done), which the bound removes. A rate pass is open loop: nothing
// bounds it but sweep.max_in_flight, already in the records. shards below
// 1 count as one (a run that was not merged).
func SentConcurrency(mode Mode, level, contextConcurrency, shards int, maxInFlight int64) int64 {
	if mode == ModeRate {
		return maxInFlight
	}
	per := level
	if mode == ModeContext {
		per = contextConcurrency
	}
	return min(maxInFlight, int64(per*max(shards, 1)))
}
