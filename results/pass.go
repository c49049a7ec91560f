package results

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The pass phases, statuses and batch transports stored in passes.
const (
	PhaseBaseline = "baseline"
	PhaseSweep    = "sweep"
	PhaseRetry    = "retry" // a lower level tried after a failure; see decisions

	PassComplete    = "complete"
	PassInterrupted = "interrupted"

	TransportCompletionsList = "completions_list" // one /v1/completions call with a list of prompts
	TransportBarrier         = "barrier"          // N chat requests released together, the next batch after all N end
)

// Pass is one row of the passes table: the aggregates of one (variant, mode,
// level, repetition) over the whole corpus. Pointer fields are nullable: nil
// means unknown or undefined (no engine metrics, no request with a first
// token, duration 0), never zero. Durations and instants are nanoseconds on
// the run's monotonic clock; memory is bytes.
type Pass struct {
	RunID      string
	Variant    string
	Mode       string // "concurrency" or "batch"
	Level      int
	Repetition int // 1-based

	Phase           string // PhaseBaseline or PhaseSweep
	Attempt         int    // 1 for a planned pass; n+1 for the n-th retry in a chain of retries
	RetryOf         *int64 // the level whose failure this pass retries at a lower level; nil for a planned pass
	RequestedBatch  *int64 // batch size asked for; nil in concurrency mode
	SentConcurrency int64  // most requests in flight from the client
	BatchTransport  string // TransportCompletionsList, TransportBarrier, or "" (NULL) in concurrency mode
	Status          string // PassComplete or PassInterrupted
	StartedNS       *int64 // first t_send
	EndedNS         *int64 // last t_done
	DurationNS      int64  // EndedNS − StartedNS; 0 when no request was sent

	Docs               int64
	Accepted           int64
	FailuresMemory     int64
	FailuresTruncation int64
	FailuresFormat     int64
	FailuresQuality    int64
	FailuresError      int64
	UniqueIDs          int64 // accepted documents counted once by id

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

	// CategoryConfusion is the pass's category confusion matrix as JSON:
	// {"expected": {"predicted": count}}, with "null" for JSON null and
	// "invalid" for a value outside the enum; "" (NULL) when not computed.
	CategoryConfusion string

	// TokenCountMismatches counts the requests whose engine-reported
	// completion_tokens and client-counted content chunks differ beyond
	// pipeline's tolerance; nil when no request had the engine's usage.
	TokenCountMismatches *int64
}

// passColumn maps one passes column to its Pass field. ptr returns a pointer
// to the field, used to scan it and (dereferenced) to write it.
type passColumn struct {
	name string
	ptr  func(p *Pass) any
}

// passColumns lists every passes column, in table order. PutPass, Passes, the
// Parquet export and the CSV all read it, so a column added here is written,
// read and exported alike.
var passColumns = []passColumn{
	{"run_id", func(p *Pass) any { return &p.RunID }},
	{"variant", func(p *Pass) any { return &p.Variant }},
	{"mode", func(p *Pass) any { return &p.Mode }},
	{"level", func(p *Pass) any { return &p.Level }},
	{"repetition", func(p *Pass) any { return &p.Repetition }},
	{"phase", func(p *Pass) any { return &p.Phase }},
	{"attempt", func(p *Pass) any { return &p.Attempt }},
	{"retry_of", func(p *Pass) any { return &p.RetryOf }},
	{"requested_batch", func(p *Pass) any { return &p.RequestedBatch }},
	{"sent_concurrency", func(p *Pass) any { return &p.SentConcurrency }},
	{"batch_transport", func(p *Pass) any { return &p.BatchTransport }},
	{"status", func(p *Pass) any { return &p.Status }},
	{"started_ns", func(p *Pass) any { return &p.StartedNS }},
	{"ended_ns", func(p *Pass) any { return &p.EndedNS }},
	{"duration_ns", func(p *Pass) any { return &p.DurationNS }},
	{"docs", func(p *Pass) any { return &p.Docs }},
	{"accepted", func(p *Pass) any { return &p.Accepted }},
	{"failures_memory", func(p *Pass) any { return &p.FailuresMemory }},
	{"failures_truncation", func(p *Pass) any { return &p.FailuresTruncation }},
	{"failures_format", func(p *Pass) any { return &p.FailuresFormat }},
	{"failures_quality", func(p *Pass) any { return &p.FailuresQuality }},
	{"failures_error", func(p *Pass) any { return &p.FailuresError }},
	{"unique_ids", func(p *Pass) any { return &p.UniqueIDs }},
	{"ttft_n", func(p *Pass) any { return &p.TTFTN }},
	{"ttft_p50_ns", func(p *Pass) any { return &p.TTFTP50NS }},
	{"ttft_p90_ns", func(p *Pass) any { return &p.TTFTP90NS }},
	{"ttft_p95_ns", func(p *Pass) any { return &p.TTFTP95NS }},
	{"ttft_p99_ns", func(p *Pass) any { return &p.TTFTP99NS }},
	{"ttft_min_ns", func(p *Pass) any { return &p.TTFTMinNS }},
	{"ttft_max_ns", func(p *Pass) any { return &p.TTFTMaxNS }},
	{"e2e_n", func(p *Pass) any { return &p.E2EN }},
	{"e2e_p50_ns", func(p *Pass) any { return &p.E2EP50NS }},
	{"e2e_p90_ns", func(p *Pass) any { return &p.E2EP90NS }},
	{"e2e_p95_ns", func(p *Pass) any { return &p.E2EP95NS }},
	{"e2e_p99_ns", func(p *Pass) any { return &p.E2EP99NS }},
	{"e2e_min_ns", func(p *Pass) any { return &p.E2EMinNS }},
	{"e2e_max_ns", func(p *Pass) any { return &p.E2EMaxNS }},
	{"e2e_sched_p95_ns", func(p *Pass) any { return &p.E2ESchedP95NS }},
	{"client_queue_p95_ns", func(p *Pass) any { return &p.ClientQueueP95NS }},
	{"tpot_p50_ns", func(p *Pass) any { return &p.TPOTP50NS }},
	{"engine_queue_mean_ns", func(p *Pass) any { return &p.EngineQueueMeanNS }},
	{"observed_max_running", func(p *Pass) any { return &p.ObservedMaxRunning }},
	{"observed_max_waiting", func(p *Pass) any { return &p.ObservedMaxWaiting }},
	{"preemptions", func(p *Pass) any { return &p.Preemptions }},
	{"output_tokens", func(p *Pass) any { return &p.OutputTokens }},
	{"usage_reported_share", func(p *Pass) any { return &p.UsageReportedShare }},
	{"output_tokens_per_s", func(p *Pass) any { return &p.OutputTokensPerS }},
	{"accepted_per_s", func(p *Pass) any { return &p.AcceptedPerS }},
	{"docs_per_hour", func(p *Pass) any { return &p.DocsPerHour }},
	{"date_f1", func(p *Pass) any { return &p.DateF1 }},
	{"amount_f1", func(p *Pass) any { return &p.AmountF1 }},
	{"category_f1", func(p *Pass) any { return &p.CategoryF1 }},
	{"peak_gpu_mem_bytes", func(p *Pass) any { return &p.PeakGPUMemBytes }},
	{"peak_torch_allocated_bytes", func(p *Pass) any { return &p.PeakTorchAllocatedBytes }},
	{"peak_torch_reserved_bytes", func(p *Pass) any { return &p.PeakTorchReservedBytes }},
	{"peak_kv_usage", func(p *Pass) any { return &p.PeakKVUsage }},
	{"verdict", func(p *Pass) any { return &p.Verdict }},
	{"verdict_reason", func(p *Pass) any { return &p.VerdictReason }},
	{"category_confusion", func(p *Pass) any { return &p.CategoryConfusion }},
	{"token_count_mismatches", func(p *Pass) any { return &p.TokenCountMismatches }},
}

// nullableText lists the passes text columns where "" is stored as NULL.
var nullableText = map[string]bool{"batch_transport": true, "verdict": true, "verdict_reason": true, "category_confusion": true}

func passColumnNames() []string {
	names := make([]string, len(passColumns))
	for i, c := range passColumns {
		names[i] = c.name
	}
	return names
}

// passValues returns p's row in column order: a nil pointer is NULL, and so
// is "" in a nullable text column.
func passValues(p *Pass) []any {
	vals := make([]any, len(passColumns))
	for i, c := range passColumns {
		switch v := c.ptr(p).(type) {
		case *string:
			if nullableText[c.name] {
				vals[i] = nullStr(*v)
			} else {
				vals[i] = *v
			}
		case *int:
			vals[i] = *v
		case *int64:
			vals[i] = *v
		case **int64:
			vals[i] = *v // database/sql writes a nil *int64 as NULL
		case **float64:
			vals[i] = *v
		default:
			panic(fmt.Sprintf("passes column %s: unhandled field type %T", c.name, v))
		}
	}
	return vals
}

var putPassSQL = func() string {
	names := passColumnNames()
	var set []string
	for _, n := range names[5:] { // everything but the key
		set = append(set, n+" = excluded."+n)
	}
	return `INSERT INTO passes (` + strings.Join(names, ", ") + `)
	VALUES (` + strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ") + `)
	ON CONFLICT (run_id, variant, mode, level, repetition) DO UPDATE SET ` + strings.Join(set, ", ") + `
	WHERE passes.phase = excluded.phase AND passes.attempt = excluded.attempt`
}()

// PutPass inserts p, or replaces the aggregates of the pass with the same key
// (a resumed pass is recomputed over all its records). It is queued behind
// the records added before it, but the aggregates should be computed from
// PassRecords, which flushes first. A pass of another phase or attempt under
// the same key is an error, never overwritten: a retry must not replace the
// first attempt, which stays the primary result.
func (s *Store) PutPass(ctx context.Context, p Pass) error {
	switch {
	case p.RunID == "":
		return fmt.Errorf("put pass: empty run id")
	case p.Status != PassComplete && p.Status != PassInterrupted:
		return fmt.Errorf("put pass %s/%s level %d rep %d: status %q is not complete or interrupted", p.Variant, p.Mode, p.Level, p.Repetition, p.Status)
	}
	vals := passValues(&p)
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, putPassSQL, vals...)
		if err != nil {
			return fmt.Errorf("put pass %s/%s level %d rep %d: %w", p.Variant, p.Mode, p.Level, p.Repetition, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("put pass %s/%s level %d rep %d: %w", p.Variant, p.Mode, p.Level, p.Repetition, err)
		} else if n == 0 {
			return fmt.Errorf("put pass %s/%s level %d rep %d: a pass of another phase or attempt has this key; it stays the primary result",
				p.Variant, p.Mode, p.Level, p.Repetition)
		}
		return nil
	})
}

// Pass returns the pass key, or nil and no error when it has no row yet.
func (s *Store) Pass(ctx context.Context, key PassKey) (*Pass, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+strings.Join(passColumnNames(), ", ")+`
		FROM passes WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ?`,
		key.RunID, key.Variant, key.Mode, key.Level, key.Repetition)
	if err != nil {
		return nil, fmt.Errorf("read pass %s: %w", key, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read pass %s: %w", key, err)
		}
		return nil, nil
	}
	p, err := scanPass(rows)
	if err != nil {
		return nil, fmt.Errorf("read pass %s: %w", key, err)
	}
	return &p, nil
}

// Passes returns the passes of run runID ordered by variant, mode, level and
// repetition.
func (s *Store) Passes(ctx context.Context, runID string) ([]Pass, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+strings.Join(passColumnNames(), ", ")+`
		FROM passes WHERE run_id = ? ORDER BY variant, mode, level, repetition`, runID)
	if err != nil {
		return nil, fmt.Errorf("read passes of run %s: %w", runID, err)
	}
	defer rows.Close()
	var passes []Pass
	for rows.Next() {
		p, err := scanPass(rows)
		if err != nil {
			return nil, fmt.Errorf("read passes of run %s: %w", runID, err)
		}
		passes = append(passes, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read passes of run %s: %w", runID, err)
	}
	return passes, nil
}

// scanPass reads a row selected with passColumnNames.
func scanPass(rows *sql.Rows) (Pass, error) {
	var p Pass
	dest := make([]any, len(passColumns))
	nulls := make(map[int]*sql.NullString)
	for i, c := range passColumns {
		if nullableText[c.name] {
			ns := new(sql.NullString)
			nulls[i] = ns
			dest[i] = ns
			continue
		}
		dest[i] = c.ptr(&p)
	}
	if err := rows.Scan(dest...); err != nil {
		return p, err
	}
	for i, ns := range nulls {
		*(passColumns[i].ptr(&p).(*string)) = ns.String
	}
	return p, nil
}
