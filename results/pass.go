package results

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
)

// passColumns lists every passes column: the one list PutPass, the
// readers, the Parquet export, raw_table.csv and SCHEMA.md's test derive
// from (see requestColumns). Each column's kind and NULL rule is its
// constructor's: a pointer field is NULL when nil, an optText column stores
// "" as NULL.
//
// A pass figure is its Pass field (pass.go), what computes it (a figure
// of the records' tally: eval's PassTally, Add and Fill), a line here, a
// migration that adds the column, and its row in SCHEMA.md.
var passColumns = withFailureColumns(columns[extractbench.Pass]{
	textField("run_id", func(p *extractbench.Pass) *string { return &p.RunID }),
	textField("variant", func(p *extractbench.Pass) *string { return &p.Variant }),
	textField("mode", func(p *extractbench.Pass) *extractbench.Mode { return &p.Mode }),
	intField("level", func(p *extractbench.Pass) *int { return &p.Level }),
	intField("repetition", func(p *extractbench.Pass) *int { return &p.Repetition }),
	textField("phase", func(p *extractbench.Pass) *string { return &p.Phase }),
	intField("attempt", func(p *extractbench.Pass) *int { return &p.Attempt }),
	optInt("retry_of", func(p *extractbench.Pass) **int64 { return &p.RetryOf }),
	optInt("requested_batch", func(p *extractbench.Pass) **int64 { return &p.RequestedBatch }),
	intField("sent_concurrency", func(p *extractbench.Pass) *int64 { return &p.SentConcurrency }),
	optText("batch_transport", func(p *extractbench.Pass) *string { return &p.BatchTransport }),
	textField("status", func(p *extractbench.Pass) *string { return &p.Status }),
	optInt("started_ns", func(p *extractbench.Pass) **int64 { return &p.StartedNS }),
	optInt("ended_ns", func(p *extractbench.Pass) **int64 { return &p.EndedNS }),
	intField("duration_ns", func(p *extractbench.Pass) *int64 { return &p.DurationNS }),
	intField("docs", func(p *extractbench.Pass) *int64 { return &p.Docs }),
	intField("accepted", func(p *extractbench.Pass) *int64 { return &p.Accepted }),
	// failures_<class>, one per extractbench.Failures entry, follow accepted (withFailureColumns).
	intField("unique_ids", func(p *extractbench.Pass) *int64 { return &p.UniqueIDs }),
	intField("ttft_n", func(p *extractbench.Pass) *int64 { return &p.TTFTN }),
	optInt("ttft_p50_ns", func(p *extractbench.Pass) **int64 { return &p.TTFTP50NS }),
	optInt("ttft_p90_ns", func(p *extractbench.Pass) **int64 { return &p.TTFTP90NS }),
	optInt("ttft_p95_ns", func(p *extractbench.Pass) **int64 { return &p.TTFTP95NS }),
	optInt("ttft_p99_ns", func(p *extractbench.Pass) **int64 { return &p.TTFTP99NS }),
	optInt("ttft_min_ns", func(p *extractbench.Pass) **int64 { return &p.TTFTMinNS }),
	optInt("ttft_max_ns", func(p *extractbench.Pass) **int64 { return &p.TTFTMaxNS }),
	intField("e2e_n", func(p *extractbench.Pass) *int64 { return &p.E2EN }),
	optInt("e2e_p50_ns", func(p *extractbench.Pass) **int64 { return &p.E2EP50NS }),
	optInt("e2e_p90_ns", func(p *extractbench.Pass) **int64 { return &p.E2EP90NS }),
	optInt("e2e_p95_ns", func(p *extractbench.Pass) **int64 { return &p.E2EP95NS }),
	optInt("e2e_p99_ns", func(p *extractbench.Pass) **int64 { return &p.E2EP99NS }),
	optInt("e2e_min_ns", func(p *extractbench.Pass) **int64 { return &p.E2EMinNS }),
	optInt("e2e_max_ns", func(p *extractbench.Pass) **int64 { return &p.E2EMaxNS }),
	optInt("e2e_sched_p95_ns", func(p *extractbench.Pass) **int64 { return &p.E2ESchedP95NS }),
	optInt("client_queue_p95_ns", func(p *extractbench.Pass) **int64 { return &p.ClientQueueP95NS }),
	optInt("tpot_p50_ns", func(p *extractbench.Pass) **int64 { return &p.TPOTP50NS }),
	optInt("engine_queue_mean_ns", func(p *extractbench.Pass) **int64 { return &p.EngineQueueMeanNS }),
	optInt("observed_max_running", func(p *extractbench.Pass) **int64 { return &p.ObservedMaxRunning }),
	optInt("observed_max_waiting", func(p *extractbench.Pass) **int64 { return &p.ObservedMaxWaiting }),
	optInt("preemptions", func(p *extractbench.Pass) **int64 { return &p.Preemptions }),
	intField("output_tokens", func(p *extractbench.Pass) *int64 { return &p.OutputTokens }),
	optReal("usage_reported_share", func(p *extractbench.Pass) **float64 { return &p.UsageReportedShare }),
	optReal("output_tokens_per_s", func(p *extractbench.Pass) **float64 { return &p.OutputTokensPerS }),
	optReal("accepted_per_s", func(p *extractbench.Pass) **float64 { return &p.AcceptedPerS }),
	optReal("docs_per_hour", func(p *extractbench.Pass) **float64 { return &p.DocsPerHour }),
	optReal("date_f1", func(p *extractbench.Pass) **float64 { return &p.DateF1 }),
	optReal("amount_f1", func(p *extractbench.Pass) **float64 { return &p.AmountF1 }),
	optReal("category_f1", func(p *extractbench.Pass) **float64 { return &p.CategoryF1 }),
	optInt("peak_gpu_mem_bytes", func(p *extractbench.Pass) **int64 { return &p.PeakGPUMemBytes }),
	optInt("peak_torch_allocated_bytes", func(p *extractbench.Pass) **int64 { return &p.PeakTorchAllocatedBytes }),
	optInt("peak_torch_reserved_bytes", func(p *extractbench.Pass) **int64 { return &p.PeakTorchReservedBytes }),
	optReal("peak_kv_usage", func(p *extractbench.Pass) **float64 { return &p.PeakKVUsage }),
	optText("verdict", func(p *extractbench.Pass) *string { return &p.Verdict }),
	optText("verdict_reason", func(p *extractbench.Pass) *string { return &p.VerdictReason }),
	optText("category_confusion", func(p *extractbench.Pass) *string { return &p.CategoryConfusion }),
	intField("prompt_tokens", func(p *extractbench.Pass) *int64 { return &p.PromptTokens }),
	optReal("prompt_tokens_per_s", func(p *extractbench.Pass) **float64 { return &p.PromptTokensPerS }),
	optReal("total_tokens_per_s", func(p *extractbench.Pass) **float64 { return &p.TotalTokensPerS }),
	optInt("engine_captures", func(p *extractbench.Pass) **int64 { return &p.EngineCaptures }),
	optInt("outputs_changed", func(p *extractbench.Pass) **int64 { return &p.OutputsChanged }),
	optInt("verdicts_changed", func(p *extractbench.Pass) **int64 { return &p.VerdictsChanged }),
	optInt("token_count_mismatches", func(p *extractbench.Pass) **int64 { return &p.TokenCountMismatches }),
	optReal("offered_rate", func(p *extractbench.Pass) **float64 { return &p.OfferedRate }),
	optReal("achieved_rate", func(p *extractbench.Pass) **float64 { return &p.AchievedRate }),
	optInt("lateness_p50_ns", func(p *extractbench.Pass) **int64 { return &p.LatenessP50NS }),
	optInt("lateness_p99_ns", func(p *extractbench.Pass) **int64 { return &p.LatenessP99NS }),
	optInt("client_delay_p99_ns", func(p *extractbench.Pass) **int64 { return &p.ClientDelayP99NS }),
	optInt("client_cpu_ns", func(p *extractbench.Pass) **int64 { return &p.ClientCPUNS }),
	optReal("client_cpu_share", func(p *extractbench.Pass) **float64 { return &p.ClientCPUShare }),
	optFlag("client_bound", func(p *extractbench.Pass) **bool { return &p.ClientBound }),
	optInt("tpot_p90_ns", func(p *extractbench.Pass) **int64 { return &p.TPOTP90NS }),
	optInt("tpot_p99_ns", func(p *extractbench.Pass) **int64 { return &p.TPOTP99NS }),
	optInt("ttft_sched_p99_ns", func(p *extractbench.Pass) **int64 { return &p.TTFTSchedP99NS }),
	optInt("on_time", func(p *extractbench.Pass) **int64 { return &p.OnTime }),
	optInt("on_time_accepted", func(p *extractbench.Pass) **int64 { return &p.OnTimeAccepted }),
	optReal("goodput", func(p *extractbench.Pass) **float64 { return &p.Goodput }),
	optInt("endpoints", func(p *extractbench.Pass) **int64 { return &p.Endpoints }),
	optInt("endpoint_requests_min", func(p *extractbench.Pass) **int64 { return &p.EndpointRequestsMin }),
	optInt("endpoint_requests_max", func(p *extractbench.Pass) **int64 { return &p.EndpointRequestsMax }),
	optInt("telemetry_samples", func(p *extractbench.Pass) **int64 { return &p.TelemetrySamples }),
	optInt("cached_prompt_tokens", func(p *extractbench.Pass) **int64 { return &p.CachedPromptTokens }),
	optReal("cached_prompt_share", func(p *extractbench.Pass) **float64 { return &p.CachedPromptShare }),
	optText("prompt_drift_reference", func(p *extractbench.Pass) *string { return &p.PromptDrift.Reference }),
	optInt("prompt_drift_compared", func(p *extractbench.Pass) **int64 { return &p.PromptDrift.Compared }),
	optInt("prompt_drift_docs", func(p *extractbench.Pass) **int64 { return &p.PromptDrift.Docs }),
	optReal("prompt_drift_median", func(p *extractbench.Pass) **float64 { return &p.PromptDrift.Median }),
	optReal("prompt_drift_max", func(p *extractbench.Pass) **float64 { return &p.PromptDrift.Max }),
	optInt("steady_trend_n", func(p *extractbench.Pass) **int64 { return &p.SteadyTrendN }),
	optReal("steady_trend_z", func(p *extractbench.Pass) **float64 { return &p.SteadyTrendZ }),
	optReal("steady_trend_effect", func(p *extractbench.Pass) **float64 { return &p.SteadyTrendEffect }),
	optFlag("steady", func(p *extractbench.Pass) **bool { return &p.Steady }),
	optText("cache_reset", func(p *extractbench.Pass) *string { return &p.CacheReset }),
	optInt("order_seed", func(p *extractbench.Pass) **int64 { return &p.OrderSeed }),
	optInt("steady_blocks", func(p *extractbench.Pass) **int64 { return &p.SteadyBlocks }),
	optReal("steady_spread", func(p *extractbench.Pass) **float64 { return &p.SteadySpread }),
	optReal("steady_head", func(p *extractbench.Pass) **float64 { return &p.SteadyHead }),
})

// passKeyColumns is how many of passColumns make the primary key (run_id,
// variant, mode, level, repetition).
const passKeyColumns = 5

// FailureColumn is the passes column counting documents of class f.
func FailureColumn(f extractbench.Failure) string { return "failures_" + string(f) }

// withFailureColumns inserts one failures_<class> column per failure class
// after "accepted", so that a class added to extractbench.Failures is
// stored, read and exported without a list to remember here. In SQLite a
// class added after migration 1 sits last instead (addFailureColumns): no
// statement reads the table by position.
func withFailureColumns(cols columns[extractbench.Pass]) columns[extractbench.Pass] {
	at := slices.IndexFunc(cols, func(c column[extractbench.Pass]) bool { return c.name == "accepted" }) + 1
	var fc columns[extractbench.Pass]
	for i, f := range extractbench.Failures {
		fc = append(fc, intField(FailureColumn(f), func(p *extractbench.Pass) *int64 { return &p.Failures[i] }))
	}
	return slices.Insert(cols, at, fc...)
}

// putPassSQL inserts a pass, or replaces the aggregates of the pass of
// its key and its phase and attempt.
var putPassSQL = passColumns.insertSQL("passes", 1, `
	ON CONFLICT (`+strings.Join(passColumns.names()[:passKeyColumns], ", ")+`) DO UPDATE SET `+passColumns.updateSet(passKeyColumns)+`
	WHERE passes.phase = excluded.phase AND passes.attempt = excluded.attempt`)

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
	vals := passColumns.values(make([]any, 0, len(passColumns)), &p)
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
		return putPassFields(ctx, tx, &p)
	})
}

// Pass returns the pass key, or nil and no error when it has no row yet.
func (r *reader) Pass(ctx context.Context, key extractbench.PassKey) (*extractbench.Pass, error) {
	passes, err := selectRows(ctx, r.rdb, passColumns, `passes WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ?`,
		key.RunID, key.Variant, key.Mode, key.Level, key.Repetition)
	if err != nil {
		return nil, fmt.Errorf("read pass %s: %w", key, err)
	}
	if len(passes) == 0 {
		return nil, nil
	}
	fields, err := r.passFields(ctx, `run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ?`,
		key.RunID, key.Variant, key.Mode, key.Level, key.Repetition)
	if err != nil {
		return nil, fmt.Errorf("read fields of pass %s: %w", key, err)
	}
	passes[0].Fields = fields[key]
	return &passes[0], nil
}

// Passes returns the passes of run runID ordered by variant, mode, level and
// repetition.
func (r *reader) Passes(ctx context.Context, runID string) ([]extractbench.Pass, error) {
	passes, err := selectRows(ctx, r.rdb, passColumns, `passes WHERE run_id = ? ORDER BY variant, mode, level, repetition`, runID)
	if err != nil {
		return nil, fmt.Errorf("read passes of run %s: %w", runID, err)
	}
	fields, err := r.passFields(ctx, `run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("read pass fields of run %s: %w", runID, err)
	}
	for i := range passes {
		p := &passes[i]
		p.Fields = fields[extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}]
	}
	return passes, nil
}
