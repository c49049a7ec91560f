package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/extractbench/extractbench"
)

// TelemetrySample is one sampled engine or device metric during a pass:
// vllm:num_requests_running, vllm:kv_cache_usage_perc, nvidia-smi memory
// used (bytes), ... TNS is the instant on the run's monotonic clock.
// Endpoint is the engine replica whose /metrics gave the sample ("" for
// none: nvidia-smi describes this machine, not an endpoint).
type TelemetrySample struct {
	TNS      int64
	Metric   string
	Value    float64
	Endpoint string
}

// TelemetryRow is one row of telemetry as stored: one sample of one
// endpoint (Endpoint "" for nvidia-smi), with the pass it belongs to.
type TelemetryRow struct {
	extractbench.PassKey
	TelemetrySample
}

// The decision kinds stored in decisions.kind. Others may be added; these are
// the ones the runner makes.
const (
	DecisionRetryLower  = "retry_lower"     // a level failed on memory; a lower one is tried as its own pass
	DecisionReduceBatch = "reduce_batch"    // a batch size failed on memory (batch mode); a smaller batch is tried
	DecisionSkipLevel   = "skip_level"      // a level is not run (a lower one already failed on memory)
	DecisionStopSweep   = "stop_sweep"      // on_memory_failure: stop: the sweep ends at a level that failed on memory, before its last planned level
	DecisionBatchMode   = "batch_transport" // the engine refused a list of prompts: B simultaneous requests with a barrier
	// DecisionAutoLevels: an auto rate sweep chose its rates from the
	// measured synchronous rate and saturated throughput (the reason says
	// both, and the rates); FromLevel is the probe's rate, ToLevel the
	// highest rate chosen.
	DecisionAutoLevels = "auto_levels"
)

// Decision is one row of decisions: something the runner chose to do that
// changes which passes exist, with its reason. The first attempt always stays
// the primary result; a decision only adds passes.
type Decision struct {
	RunID     string
	Variant   string
	Mode      extractbench.Mode // "" (NULL) when the decision concerns the variant as a whole
	AtMS      int64             // Unix milliseconds
	Kind      string
	FromLevel int // 0 (NULL) when none
	ToLevel   int // 0 (NULL) when none (skip_level, stop_sweep)
	Reason    string
}

// The event kinds stored in events.kind.
const (
	EventEngineLoad   = "engine_load"          // ValueNS: engine start until ready
	EventWarmup       = "warmup"               // ValueNS: the warm-up's duration; excluded from every figure
	EventInterrupted  = "interrupted"          // Detail: why (signal, engine died)
	EventResumed      = "resumed"              // Detail: what was left to do
	EventEngineExit   = "engine_exit"          // Detail: exit status and the log's tail
	EventEngineStale  = "engine_stale_stopped" // Detail: the engine an interrupted attempt left running, found by its pid file, and what was done
	EventVariantFail  = "variant_failed"       // Detail: why the variant could not be measured (engine did not start, ...)
	EventLockStale    = "lock_taken_over"      // Detail: the holder a killed process left in the directory's lock file
	EventAppended     = "appended"             // Detail: a new run appended (-append) to a directory holding runs of the same fingerprint
	EventEngineDead   = "engine_dead"          // Detail: a started engine died mid-variant: dispatch stopped, what was left unsent
	EventClientFrozen = "client_frozen"        // Detail: the client's own timeline stopped (SIGSTOP, a VM pause) during a pass: its gaps
	EventReplicaDead  = "replica_dead"         // Detail: one of a variant's replicas (engine.urls) stopped answering: no further request goes to it
	// EventCorpusReadFailed: a document of the corpus could not be read
	// back as the run indexed it (the file changed, or reading failed), so
	// the run stopped before sending it; Detail names the document and its
	// file:line. -resume completes the run once the file is restored.
	EventCorpusReadFailed = "corpus_read_failed"
	// EventBaselineDiffAccepted: -baseline compared this run with a baseline
	// that measured something else (-accept-baseline-diff); Detail lists what.
	EventBaselineDiffAccepted = "baseline_differences_accepted"
	// EventMerged: `merge` built this run from shards; Detail lists them,
	// the missing indexes and the duplicate rows dropped.
	EventMerged = "merged"
	// EventTelemetryErrors: scrapes of the engine's /metrics (or nvidia-smi
	// readings) failed during a pass, so its engine figures are partial or
	// missing; Detail gives the pass, the counts and the last error.
	EventTelemetryErrors = "telemetry_errors"
	// EventEngineNumbersRefused: during a pass the engine reported numbers
	// that cannot be true (a negative or absurd token count in a usage; a
	// NaN, infinite or out-of-domain /metrics value), which were refused:
	// NULL (or, for completion tokens, the client's count), never summed.
	// One per pass; Detail names the pass and each refused figure, how
	// often, and the first value.
	EventEngineNumbersRefused = "engine_numbers_refused"
	// EventEngineCallTimeout: a metadata call to the engine (/v1/models, a
	// version probe, POST /reset_peaks) got no answer within its deadline;
	// the run went on without it. Detail: the endpoint, the call, what was
	// done without it.
	EventEngineCallTimeout = "engine_call_timeout"
	// EventClientFaults: requests of a pass failed in the client itself
	// (transport_kind client: out of file descriptors, ports, buffers).
	// Detail: the pass, their count and the last error.
	EventClientFaults = "client_faults"
	// EventCacheReset: the engine was asked to empty its prompt cache
	// before a pass (protocol cache: reset). Detail: the pass, each call
	// and the engine's status and short answer, or why nothing was asked
	// (its family has no reset: once per variant).
	EventCacheReset = "cache_reset"
	// EventEngineChanged: the engine, read again before a pass, answered
	// as another engine than the one pinned in the manifest (upgraded, or
	// another model loaded, under the run); the variant stopped there, as
	// ERROR, its passes measured before kept. Detail: the replica, the pass
	// and each part old → new ("version 0.9.0 → 0.10.0").
	EventEngineChanged = "engine_changed"
	// EventEngineIdentityUnread: the engine's identity could not be read
	// (an error, not a missed deadline: that is engine_call_timeout), so a
	// change of engine is seen only in what it does answer; once per
	// replica. Detail: the replica, when, and the error.
	EventEngineIdentityUnread = "engine_identity_unread"
)

// Event is one row of events: something that happened to the run or a
// variant and belongs next to its figures.
type Event struct {
	RunID   string
	Variant string // "" (NULL) for a run-wide event
	AtMS    int64  // Unix milliseconds
	Kind    string
	ValueNS int64 // a duration when the kind has one; 0 = NULL
	Detail  string
}

// AddTelemetry stores samples of the pass key in one transaction, behind the
// records added before.
func (s *Store) AddTelemetry(ctx context.Context, key extractbench.PassKey, samples []TelemetrySample) error {
	if len(samples) == 0 {
		return nil
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, telemetryColumns.insertSQL("telemetry", 1, ""))
		if err != nil {
			return fmt.Errorf("prepare telemetry of pass %s: %w", key, err)
		}
		defer stmt.Close()
		vals := make([]any, 0, len(telemetryColumns))
		for _, t := range samples {
			row := TelemetryRow{key, t}
			if _, err := stmt.ExecContext(ctx, telemetryColumns.values(vals[:0], &row)...); err != nil {
				return fmt.Errorf("add telemetry %s of pass %s: %w", t.Metric, key, err)
			}
		}
		return nil
	})
}

// telemetryColumns lists every telemetry column, in table order (see
// requestColumns). Telemetry aggregates samples in SQL; TelemetryRows
// reads them as stored.
var telemetryColumns = columns[TelemetryRow]{
	{name: "run_id", kind: text, repeats: true, value: func(t *TelemetryRow) any { return t.RunID }, load: func(t *TelemetryRow, c *cell) { t.RunID = c.s }},
	{name: "variant", kind: text, repeats: true, value: func(t *TelemetryRow) any { return t.Variant }, load: func(t *TelemetryRow, c *cell) { t.Variant = c.s }},
	{name: "mode", kind: text, repeats: true, value: func(t *TelemetryRow) any { return string(t.Mode) }, load: func(t *TelemetryRow, c *cell) { t.Mode = extractbench.Mode(c.s) }},
	{name: "level", kind: integer, repeats: true, value: func(t *TelemetryRow) any { return int64(t.Level) }, load: func(t *TelemetryRow, c *cell) { t.Level = c.int() }},
	{name: "repetition", kind: integer, repeats: true, value: func(t *TelemetryRow) any { return int64(t.Repetition) }, load: func(t *TelemetryRow, c *cell) { t.Repetition = c.int() }},
	{name: "t_ns", kind: integer, value: func(t *TelemetryRow) any { return t.TNS }, load: func(t *TelemetryRow, c *cell) { t.TNS = c.i }},
	{name: "metric", kind: text, repeats: true, value: func(t *TelemetryRow) any { return t.Metric }, load: func(t *TelemetryRow, c *cell) { t.Metric = c.s }},
	{name: "value", kind: real, value: func(t *TelemetryRow) any { return t.Value }, load: func(t *TelemetryRow, c *cell) { t.Value = c.f }},
	{name: "endpoint", kind: text, nullable: true, repeats: true, value: func(t *TelemetryRow) any { return nullStr(t.Endpoint) }, load: func(t *TelemetryRow, c *cell) { t.Endpoint = c.s }},
}

// decisionColumns lists every decisions column, in table order (see
// requestColumns).
var decisionColumns = columns[Decision]{
	{name: "run_id", kind: text, value: func(d *Decision) any { return d.RunID }, load: func(d *Decision, c *cell) { d.RunID = c.s }},
	{name: "variant", kind: text, value: func(d *Decision) any { return d.Variant }, load: func(d *Decision, c *cell) { d.Variant = c.s }},
	{name: "mode", kind: text, nullable: true, value: func(d *Decision) any { return nullStr(d.Mode) }, load: func(d *Decision, c *cell) { d.Mode = extractbench.Mode(c.s) }},
	{name: "at_ms", kind: integer, value: func(d *Decision) any { return d.AtMS }, load: func(d *Decision, c *cell) { d.AtMS = c.i }},
	{name: "kind", kind: text, value: func(d *Decision) any { return d.Kind }, load: func(d *Decision, c *cell) { d.Kind = c.s }},
	{name: "from_level", kind: integer, nullable: true, value: func(d *Decision) any { return nullInt(d.FromLevel) }, load: func(d *Decision, c *cell) { d.FromLevel = c.int() }},
	{name: "to_level", kind: integer, nullable: true, value: func(d *Decision) any { return nullInt(d.ToLevel) }, load: func(d *Decision, c *cell) { d.ToLevel = c.int() }},
	{name: "reason", kind: text, value: func(d *Decision) any { return d.Reason }, load: func(d *Decision, c *cell) { d.Reason = c.s }},
}

// eventColumns lists every events column, in table order (see
// requestColumns).
var eventColumns = columns[Event]{
	{name: "run_id", kind: text, value: func(e *Event) any { return e.RunID }, load: func(e *Event, c *cell) { e.RunID = c.s }},
	{name: "variant", kind: text, nullable: true, value: func(e *Event) any { return nullStr(e.Variant) }, load: func(e *Event, c *cell) { e.Variant = c.s }},
	{name: "at_ms", kind: integer, value: func(e *Event) any { return e.AtMS }, load: func(e *Event, c *cell) { e.AtMS = c.i }},
	{name: "kind", kind: text, value: func(e *Event) any { return e.Kind }, load: func(e *Event, c *cell) { e.Kind = c.s }},
	{name: "value_ns", kind: integer, nullable: true, value: func(e *Event) any { return nullInt(e.ValueNS) }, load: func(e *Event, c *cell) { e.ValueNS = c.i }},
	{name: "detail", kind: text, nullable: true, value: func(e *Event) any { return nullStr(e.Detail) }, load: func(e *Event, c *cell) { e.Detail = c.s }},
}

// AddDecision records d.
func (s *Store) AddDecision(ctx context.Context, d Decision) error {
	if d.RunID == "" || d.Kind == "" {
		return errors.New("add decision: run id and kind are required")
	}
	d.Reason = s.secrets.redact(d.Reason)
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, decisionColumns.insertSQL("decisions", 1, ""), decisionColumns.values(nil, &d)...); err != nil {
			return fmt.Errorf("add decision %s of run %s: %w", d.Kind, d.RunID, err)
		}
		return nil
	})
}

// AddEvent records e.
func (s *Store) AddEvent(ctx context.Context, e Event) error {
	if e.RunID == "" || e.Kind == "" {
		return errors.New("add event: run id and kind are required")
	}
	e.Detail = s.secrets.redact(e.Detail)
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, eventColumns.insertSQL("events", 1, ""), eventColumns.values(nil, &e)...); err != nil {
			return fmt.Errorf("add event %s of run %s: %w", e.Kind, e.RunID, err)
		}
		return nil
	})
}

// Decisions returns the decisions of run runID in the order they were made.
func (r *reader) Decisions(ctx context.Context, runID string) ([]Decision, error) {
	ds, err := selectRows(ctx, r.rdb, decisionColumns, `decisions WHERE run_id = ? ORDER BY at_ms, rowid`, runID)
	if err != nil {
		return nil, fmt.Errorf("read decisions of run %s: %w", runID, err)
	}
	return ds, nil
}

// Events returns the events of run runID in the order they happened.
func (r *reader) Events(ctx context.Context, runID string) ([]Event, error) {
	es, err := selectRows(ctx, r.rdb, eventColumns, `events WHERE run_id = ? ORDER BY at_ms, rowid`, runID)
	if err != nil {
		return nil, fmt.Errorf("read events of run %s: %w", runID, err)
	}
	return es, nil
}
