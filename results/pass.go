package results

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
)

// passColumn maps one passes column to its Pass field. ptr returns a pointer
// to the field, used to scan it and (dereferenced) to write it.
type passColumn struct {
	name string
	ptr  func(p *extractbench.Pass) any
}

// passColumns lists every passes column, in table order. PutPass, Passes, the
// Parquet export and the CSV all read it, so a column added here is written,
// read and exported alike.
var passColumns = withFailureColumns([]passColumn{
	{"run_id", func(p *extractbench.Pass) any { return &p.RunID }},
	{"variant", func(p *extractbench.Pass) any { return &p.Variant }},
	{"mode", func(p *extractbench.Pass) any { return (*string)(&p.Mode) }}, // a Mode is stored as its text
	{"level", func(p *extractbench.Pass) any { return &p.Level }},
	{"repetition", func(p *extractbench.Pass) any { return &p.Repetition }},
	{"phase", func(p *extractbench.Pass) any { return &p.Phase }},
	{"attempt", func(p *extractbench.Pass) any { return &p.Attempt }},
	{"retry_of", func(p *extractbench.Pass) any { return &p.RetryOf }},
	{"requested_batch", func(p *extractbench.Pass) any { return &p.RequestedBatch }},
	{"sent_concurrency", func(p *extractbench.Pass) any { return &p.SentConcurrency }},
	{"batch_transport", func(p *extractbench.Pass) any { return &p.BatchTransport }},
	{"status", func(p *extractbench.Pass) any { return &p.Status }},
	{"started_ns", func(p *extractbench.Pass) any { return &p.StartedNS }},
	{"ended_ns", func(p *extractbench.Pass) any { return &p.EndedNS }},
	{"duration_ns", func(p *extractbench.Pass) any { return &p.DurationNS }},
	{"docs", func(p *extractbench.Pass) any { return &p.Docs }},
	{"accepted", func(p *extractbench.Pass) any { return &p.Accepted }},
	// failures_<class>, one per extractbench.Failures entry, follow accepted (withFailureColumns).
	{"unique_ids", func(p *extractbench.Pass) any { return &p.UniqueIDs }},
	{"ttft_n", func(p *extractbench.Pass) any { return &p.TTFTN }},
	{"ttft_p50_ns", func(p *extractbench.Pass) any { return &p.TTFTP50NS }},
	{"ttft_p90_ns", func(p *extractbench.Pass) any { return &p.TTFTP90NS }},
	{"ttft_p95_ns", func(p *extractbench.Pass) any { return &p.TTFTP95NS }},
	{"ttft_p99_ns", func(p *extractbench.Pass) any { return &p.TTFTP99NS }},
	{"ttft_min_ns", func(p *extractbench.Pass) any { return &p.TTFTMinNS }},
	{"ttft_max_ns", func(p *extractbench.Pass) any { return &p.TTFTMaxNS }},
	{"e2e_n", func(p *extractbench.Pass) any { return &p.E2EN }},
	{"e2e_p50_ns", func(p *extractbench.Pass) any { return &p.E2EP50NS }},
	{"e2e_p90_ns", func(p *extractbench.Pass) any { return &p.E2EP90NS }},
	{"e2e_p95_ns", func(p *extractbench.Pass) any { return &p.E2EP95NS }},
	{"e2e_p99_ns", func(p *extractbench.Pass) any { return &p.E2EP99NS }},
	{"e2e_min_ns", func(p *extractbench.Pass) any { return &p.E2EMinNS }},
	{"e2e_max_ns", func(p *extractbench.Pass) any { return &p.E2EMaxNS }},
	{"e2e_sched_p95_ns", func(p *extractbench.Pass) any { return &p.E2ESchedP95NS }},
	{"client_queue_p95_ns", func(p *extractbench.Pass) any { return &p.ClientQueueP95NS }},
	{"tpot_p50_ns", func(p *extractbench.Pass) any { return &p.TPOTP50NS }},
	{"engine_queue_mean_ns", func(p *extractbench.Pass) any { return &p.EngineQueueMeanNS }},
	{"observed_max_running", func(p *extractbench.Pass) any { return &p.ObservedMaxRunning }},
	{"observed_max_waiting", func(p *extractbench.Pass) any { return &p.ObservedMaxWaiting }},
	{"preemptions", func(p *extractbench.Pass) any { return &p.Preemptions }},
	{"output_tokens", func(p *extractbench.Pass) any { return &p.OutputTokens }},
	{"usage_reported_share", func(p *extractbench.Pass) any { return &p.UsageReportedShare }},
	{"output_tokens_per_s", func(p *extractbench.Pass) any { return &p.OutputTokensPerS }},
	{"accepted_per_s", func(p *extractbench.Pass) any { return &p.AcceptedPerS }},
	{"docs_per_hour", func(p *extractbench.Pass) any { return &p.DocsPerHour }},
	{"date_f1", func(p *extractbench.Pass) any { return &p.DateF1 }},
	{"amount_f1", func(p *extractbench.Pass) any { return &p.AmountF1 }},
	{"category_f1", func(p *extractbench.Pass) any { return &p.CategoryF1 }},
	{"peak_gpu_mem_bytes", func(p *extractbench.Pass) any { return &p.PeakGPUMemBytes }},
	{"peak_torch_allocated_bytes", func(p *extractbench.Pass) any { return &p.PeakTorchAllocatedBytes }},
	{"peak_torch_reserved_bytes", func(p *extractbench.Pass) any { return &p.PeakTorchReservedBytes }},
	{"peak_kv_usage", func(p *extractbench.Pass) any { return &p.PeakKVUsage }},
	{"verdict", func(p *extractbench.Pass) any { return &p.Verdict }},
	{"verdict_reason", func(p *extractbench.Pass) any { return &p.VerdictReason }},
	{"category_confusion", func(p *extractbench.Pass) any { return &p.CategoryConfusion }},
	{"prompt_tokens", func(p *extractbench.Pass) any { return &p.PromptTokens }},
	{"prompt_tokens_per_s", func(p *extractbench.Pass) any { return &p.PromptTokensPerS }},
	{"total_tokens_per_s", func(p *extractbench.Pass) any { return &p.TotalTokensPerS }},
	{"engine_captures", func(p *extractbench.Pass) any { return &p.EngineCaptures }},
	{"outputs_changed", func(p *extractbench.Pass) any { return &p.OutputsChanged }},
	{"verdicts_changed", func(p *extractbench.Pass) any { return &p.VerdictsChanged }},
	{"token_count_mismatches", func(p *extractbench.Pass) any { return &p.TokenCountMismatches }},
	{"offered_rate", func(p *extractbench.Pass) any { return &p.OfferedRate }},
	{"achieved_rate", func(p *extractbench.Pass) any { return &p.AchievedRate }},
	{"lateness_p50_ns", func(p *extractbench.Pass) any { return &p.LatenessP50NS }},
	{"lateness_p99_ns", func(p *extractbench.Pass) any { return &p.LatenessP99NS }},
	{"client_delay_p99_ns", func(p *extractbench.Pass) any { return &p.ClientDelayP99NS }},
	{"client_cpu_ns", func(p *extractbench.Pass) any { return &p.ClientCPUNS }},
	{"client_cpu_share", func(p *extractbench.Pass) any { return &p.ClientCPUShare }},
	{"client_bound", func(p *extractbench.Pass) any { return &p.ClientBound }},
	{"tpot_p90_ns", func(p *extractbench.Pass) any { return &p.TPOTP90NS }},
	{"tpot_p99_ns", func(p *extractbench.Pass) any { return &p.TPOTP99NS }},
	{"ttft_sched_p99_ns", func(p *extractbench.Pass) any { return &p.TTFTSchedP99NS }},
	{"on_time", func(p *extractbench.Pass) any { return &p.OnTime }},
	{"on_time_accepted", func(p *extractbench.Pass) any { return &p.OnTimeAccepted }},
	{"goodput", func(p *extractbench.Pass) any { return &p.Goodput }},
	{"endpoints", func(p *extractbench.Pass) any { return &p.Endpoints }},
	{"endpoint_requests_min", func(p *extractbench.Pass) any { return &p.EndpointRequestsMin }},
	{"endpoint_requests_max", func(p *extractbench.Pass) any { return &p.EndpointRequestsMax }},
	{"telemetry_samples", func(p *extractbench.Pass) any { return &p.TelemetrySamples }},
	{"cached_prompt_tokens", func(p *extractbench.Pass) any { return &p.CachedPromptTokens }},
	{"cached_prompt_share", func(p *extractbench.Pass) any { return &p.CachedPromptShare }},
	{"prompt_drift_reference", func(p *extractbench.Pass) any { return &p.PromptDrift.Reference }},
	{"prompt_drift_compared", func(p *extractbench.Pass) any { return &p.PromptDrift.Compared }},
	{"prompt_drift_docs", func(p *extractbench.Pass) any { return &p.PromptDrift.Docs }},
	{"prompt_drift_median", func(p *extractbench.Pass) any { return &p.PromptDrift.Median }},
	{"prompt_drift_max", func(p *extractbench.Pass) any { return &p.PromptDrift.Max }},
	{"steady_trend_n", func(p *extractbench.Pass) any { return &p.SteadyTrendN }},
	{"steady_trend_z", func(p *extractbench.Pass) any { return &p.SteadyTrendZ }},
	{"steady_trend_effect", func(p *extractbench.Pass) any { return &p.SteadyTrendEffect }},
	{"steady", func(p *extractbench.Pass) any { return &p.Steady }},
})

// FailureColumn is the passes column counting documents of class f.
func FailureColumn(f extractbench.Failure) string { return "failures_" + string(f) }

// withFailureColumns inserts one failures_<class> column per failure class
// after "accepted", so that a class added to extractbench.Failures is stored, read
// and exported without a list to remember here.
func withFailureColumns(cols []passColumn) []passColumn {
	at := slices.IndexFunc(cols, func(c passColumn) bool { return c.name == "accepted" }) + 1
	var fc []passColumn
	for i, f := range extractbench.Failures {
		fc = append(fc, passColumn{FailureColumn(f), func(p *extractbench.Pass) any { return &p.Failures[i] }})
	}
	return slices.Insert(cols, at, fc...)
}

// nullableText lists the passes text columns where "" is stored as NULL.
var nullableText = map[string]bool{"batch_transport": true, "verdict": true, "verdict_reason": true, "category_confusion": true, "prompt_drift_reference": true}

func passColumnNames() []string {
	names := make([]string, len(passColumns))
	for i, c := range passColumns {
		names[i] = c.name
	}
	return names
}

// passValues returns p's row in column order: a nil pointer is NULL, and so
// is "" in a nullable text column.
func passValues(p *extractbench.Pass) []any {
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
		case **bool:
			vals[i] = *v // a flag: 1, 0 or NULL
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
func (s *Store) PutPass(ctx context.Context, p extractbench.Pass) error {
	switch {
	case p.RunID == "":
		return fmt.Errorf("put pass: empty run id")
	case p.Status != extractbench.PassComplete && p.Status != extractbench.PassInterrupted:
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
func (r *reader) Pass(ctx context.Context, key extractbench.PassKey) (*extractbench.Pass, error) {
	rows, err := r.rdb.QueryContext(ctx, `SELECT `+strings.Join(passColumnNames(), ", ")+`
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
func (r *reader) Passes(ctx context.Context, runID string) ([]extractbench.Pass, error) {
	rows, err := r.rdb.QueryContext(ctx, `SELECT `+strings.Join(passColumnNames(), ", ")+`
		FROM passes WHERE run_id = ? ORDER BY variant, mode, level, repetition`, runID)
	if err != nil {
		return nil, fmt.Errorf("read passes of run %s: %w", runID, err)
	}
	defer rows.Close()
	var passes []extractbench.Pass
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
func scanPass(rows *sql.Rows) (extractbench.Pass, error) {
	var p extractbench.Pass
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
