package report

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench/sizing"
)

// excerptBytes bounds the output text read back for a failed document: the
// report shows an excerpt, and a run can hold thousands of failures.
const excerptBytes = 600

// runRow is one row of the runs table.
type runRow struct {
	ID, Fingerprint, Protocol, Status string
	Manifest                          json.RawMessage
	StartedAt, EndedAt                int64 // unix ms; 0 = unset
	Simulated                         bool
}

// passRow is one row of the passes table, as far as the report reads it.
// Nullable columns are pointers: nil means unavailable, never 0.
type passRow struct {
	Variant, Mode, Phase, Status, Verdict, VerdictReason string
	Level, Repetition                                    int
	SentConcurrency, RequestedBatch                      *int64
	ObservedMaxRunning, ObservedMaxWaiting, Preemptions  *float64
	Docs, Accepted                                       int
	Failures                                             [5]int // in eval.Failures order
	DurationNS                                           int64
	StartedNS                                            *int64
	E2EP95NS                                             *int64
	OutputTokensPerS, DocsPerHour                        *float64
	OutputTokens                                         *int64
	PeakGPUMem, PeakTorchAlloc, PeakTorchReserved        *float64
	PeakKV                                               *float64
	CategoryConfusion                                    string // JSON, see results/SCHEMA.md; "" when not recorded
}

// requestRow is one row of the requests table, without the full output.
type requestRow struct {
	Variant, Mode                        string
	Level, Repetition                    int
	DocID, LengthClass                   string
	TTFT, E2E, E2ESched, ClientQueue     *int64
	PromptTokens, CompletionTokens       *int64
	FinishReason, Failure, FailureDetail string
	HTTPStatus                           *int64
	Accepted                             bool
	Output                               string // the first excerptBytes of a failed request's output; "" otherwise
}

// sampleRow is one telemetry sample.
type sampleRow struct {
	Variant, Mode     string
	Level, Repetition int
	TNS               int64
	Metric            string
	Value             float64
}

// eventRow is one row of the events or decisions table, flattened.
type eventRow struct {
	Variant, Kind, Detail string
	AtMS                  int64
	ValueNS               *int64
	FromLevel, ToLevel    *int64
}

// dataset is everything the report reads from one results directory: the
// latest run and its rows.
type dataset struct {
	Dir       string
	Run       runRow
	Runs      int // runs in the database; the report reads the latest
	Passes    []passRow
	Requests  []requestRow
	Telemetry []sampleRow
	Events    []eventRow
	Decisions []eventRow
}

// load reads the latest run of dir/results.db, read-only.
func load(ctx context.Context, dir string) (*dataset, error) {
	db, err := sizing.OpenDB(dir) // read-only, the path escaped as a URI
	if err != nil {
		return nil, fmt.Errorf("open results database: %w", err)
	}
	defer db.Close()

	d := &dataset{Dir: dir}
	if err := loadRun(ctx, db, &d.Run); err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM runs").Scan(&d.Runs); err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	if d.Passes, err = loadPasses(ctx, db, d.Run.ID); err != nil {
		return nil, err
	}
	if d.Requests, err = loadRequests(ctx, db, d.Run.ID); err != nil {
		return nil, err
	}
	if d.Telemetry, err = loadTelemetry(ctx, db, d.Run.ID, d.Passes); err != nil {
		return nil, err
	}
	if d.Events, err = loadEvents(ctx, db, d.Run.ID, "events"); err != nil {
		return nil, err
	}
	if d.Decisions, err = loadEvents(ctx, db, d.Run.ID, "decisions"); err != nil {
		return nil, err
	}
	return d, nil
}

// columnSet lists the columns of a table, so that the report can read a
// database written before an optional column was added. A missing table
// gives an empty set.
type columnSet struct {
	table string
	have  map[string]bool
}

func tableColumns(ctx context.Context, db *sql.DB, table string) (columnSet, error) {
	cs := columnSet{table: table, have: map[string]bool{}}
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return cs, fmt.Errorf("list columns of %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return cs, fmt.Errorf("list columns of %s: %w", table, err)
		}
		cs.have[name] = true
	}
	return cs, rows.Err()
}

// selectList builds a select list: required columns must exist; optional
// ones read as NULL when the table lacks them.
func (cs columnSet) selectList(required, optional []string) (string, error) {
	if len(cs.have) == 0 {
		return "", fmt.Errorf("results database has no %s table: is it an extractbench results.db?", cs.table)
	}
	var out, missing []string
	for _, c := range required {
		if !cs.have[c] {
			missing = append(missing, c)
		}
		out = append(out, c)
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("table %s lacks column(s) %s: written by an incompatible extractbench version", cs.table, strings.Join(missing, ", "))
	}
	for _, c := range optional {
		if cs.have[c] {
			out = append(out, c)
		} else {
			out = append(out, "NULL AS "+c)
		}
	}
	return strings.Join(out, ", "), nil
}

func loadRun(ctx context.Context, db *sql.DB, r *runRow) error {
	cs, err := tableColumns(ctx, db, "runs")
	if err != nil {
		return err
	}
	list, err := cs.selectList([]string{"run_id", "manifest", "started_at", "ended_at", "status"},
		[]string{"fingerprint", "protocol_name", "simulated"})
	if err != nil {
		return err
	}
	var fp, proto sql.NullString
	var started, ended, sim sql.NullInt64
	var manifest, status sql.NullString
	err = db.QueryRowContext(ctx, "SELECT "+list+" FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1").
		Scan(&r.ID, &manifest, &started, &ended, &status, &fp, &proto, &sim)
	if errors.Is(err, sql.ErrNoRows) {
		return errors.New("read latest run: results database holds no run yet")
	}
	if err != nil {
		return fmt.Errorf("read latest run: %w", err)
	}
	r.Manifest = json.RawMessage(manifest.String)
	r.StartedAt, r.EndedAt, r.Status = started.Int64, ended.Int64, status.String
	r.Fingerprint, r.Protocol, r.Simulated = fp.String, proto.String, sim.Int64 != 0
	return nil
}

func loadPasses(ctx context.Context, db *sql.DB, runID string) ([]passRow, error) {
	cs, err := tableColumns(ctx, db, "passes")
	if err != nil {
		return nil, err
	}
	list, err := cs.selectList(
		[]string{"variant", "mode", "level", "repetition", "requested_batch", "sent_concurrency",
			"observed_max_running", "docs", "accepted", "failures_memory", "failures_truncation",
			"failures_format", "failures_quality", "failures_error", "duration_ns", "e2e_p95_ns",
			"output_tokens_per_s", "peak_gpu_mem_bytes", "peak_torch_allocated_bytes",
			"peak_torch_reserved_bytes", "peak_kv_usage", "verdict"},
		[]string{"phase", "status", "verdict_reason", "observed_max_waiting", "preemptions",
			"docs_per_hour", "output_tokens", "started_ns", "category_confusion"})
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT "+list+" FROM passes WHERE run_id = ? ORDER BY variant, mode, level, repetition", runID)
	if err != nil {
		return nil, fmt.Errorf("read passes: %w", err)
	}
	defer rows.Close()
	var out []passRow
	for rows.Next() {
		var p passRow
		var batch, sent, e2e, outTok, started sql.NullInt64
		var running, waiting, preempt, tps, dph, gpu, alloc, resv, kv sql.NullFloat64
		var verdict, phase, status, reason, confusion sql.NullString
		var dur sql.NullInt64
		err := rows.Scan(&p.Variant, &p.Mode, &p.Level, &p.Repetition, &batch, &sent, &running,
			&p.Docs, &p.Accepted, &p.Failures[0], &p.Failures[1], &p.Failures[2], &p.Failures[3], &p.Failures[4],
			&dur, &e2e, &tps, &gpu, &alloc, &resv, &kv, &verdict,
			&phase, &status, &reason, &waiting, &preempt, &dph, &outTok, &started, &confusion)
		if err != nil {
			return nil, fmt.Errorf("read passes: %w", err)
		}
		p.RequestedBatch, p.SentConcurrency, p.E2EP95NS = intPtr(batch), intPtr(sent), intPtr(e2e)
		p.OutputTokens, p.StartedNS = intPtr(outTok), intPtr(started)
		p.ObservedMaxRunning, p.ObservedMaxWaiting, p.Preemptions = floatPtr(running), floatPtr(waiting), floatPtr(preempt)
		p.OutputTokensPerS, p.DocsPerHour = floatPtr(tps), floatPtr(dph)
		p.PeakGPUMem, p.PeakTorchAlloc, p.PeakTorchReserved, p.PeakKV = floatPtr(gpu), floatPtr(alloc), floatPtr(resv), floatPtr(kv)
		p.DurationNS = dur.Int64
		p.Verdict, p.Phase, p.Status, p.VerdictReason = verdict.String, phase.String, status.String, reason.String
		p.CategoryConfusion = confusion.String
		out = append(out, p)
	}
	return out, rows.Err()
}

func loadRequests(ctx context.Context, db *sql.DB, runID string) ([]requestRow, error) {
	cs, err := tableColumns(ctx, db, "requests")
	if err != nil {
		return nil, err
	}
	list, err := cs.selectList(
		[]string{"variant", "mode", "level", "repetition", "doc_id", "length_class", "ttft_ns", "e2e_ns",
			"client_queue_ns", "prompt_tokens", "completion_tokens", "finish_reason", "http_status",
			"failure", "failure_detail", "accepted"},
		[]string{"e2e_sched_ns"})
	// A failure with no output (an OOM answer, a reset) shows the engine's
	// error body instead, when the table has it.
	shown := "output"
	if cs.have["error_body"] {
		shown = "CASE WHEN output IS NULL OR output = '' THEN error_body ELSE output END"
	}
	if err != nil {
		return nil, err
	}
	// Only failed requests carry their output: the rest is never shown.
	q := "SELECT " + list + fmt.Sprintf(", CASE WHEN failure IS NOT NULL AND failure != '' THEN substr(%s, 1, %d) END", shown, excerptBytes) +
		" FROM requests WHERE run_id = ? ORDER BY variant, mode, level, repetition, doc_id"
	rows, err := db.QueryContext(ctx, q, runID)
	if err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	defer rows.Close()
	var out []requestRow
	for rows.Next() {
		var r requestRow
		var lc, finish, failure, detail, output sql.NullString
		var ttft, e2e, queue, pt, ct, status, sched sql.NullInt64
		var accepted sql.NullBool
		err := rows.Scan(&r.Variant, &r.Mode, &r.Level, &r.Repetition, &r.DocID, &lc, &ttft, &e2e,
			&queue, &pt, &ct, &finish, &status, &failure, &detail, &accepted, &sched, &output)
		if err != nil {
			return nil, fmt.Errorf("read requests: %w", err)
		}
		r.LengthClass, r.FinishReason, r.Failure, r.FailureDetail = lc.String, finish.String, failure.String, detail.String
		r.TTFT, r.E2E, r.ClientQueue, r.E2ESched = intPtr(ttft), intPtr(e2e), intPtr(queue), intPtr(sched)
		r.PromptTokens, r.CompletionTokens, r.HTTPStatus = intPtr(pt), intPtr(ct), intPtr(status)
		r.Accepted, r.Output = accepted.Bool, output.String
		out = append(out, r)
	}
	return out, rows.Err()
}

// passKey names one pass within a run.
type passKey struct {
	Variant, Mode     string
	Level, Repetition int
}

func keyOf(p passRow) passKey { return passKey{p.Variant, p.Mode, p.Level, p.Repetition} }

// loadTelemetry reads the timeline samples of the heaviest pass of each
// variant and mode, and only those: a run sampled every 100 ms holds
// hundreds of thousands of samples the report never draws.
func loadTelemetry(ctx context.Context, db *sql.DB, runID string, passes []passRow) ([]sampleRow, error) {
	cs, err := tableColumns(ctx, db, "telemetry")
	if err != nil {
		return nil, err
	}
	if len(cs.have) == 0 {
		return nil, nil // telemetry is optional: an engine without /metrics leaves none
	}
	if _, err := cs.selectList([]string{"variant", "mode", "level", "repetition", "t_ns", "metric", "value"}, nil); err != nil {
		return nil, err
	}
	has := map[passKey]bool{}
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT variant, mode, level, repetition FROM telemetry WHERE run_id = ?", runID)
	if err != nil {
		return nil, fmt.Errorf("read telemetry passes: %w", err)
	}
	for rows.Next() {
		var k passKey
		if err := rows.Scan(&k.Variant, &k.Mode, &k.Level, &k.Repetition); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read telemetry passes: %w", err)
		}
		has[k] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read telemetry passes: %w", err)
	}

	names := timelineMetricNames()
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	q := "SELECT t_ns, metric, value FROM telemetry WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ? AND metric IN (" + marks + ") ORDER BY t_ns"
	var out []sampleRow
	seen := map[[2]string]bool{}
	for _, p := range passes {
		if seen[[2]string{p.Variant, p.Mode}] {
			continue
		}
		seen[[2]string{p.Variant, p.Mode}] = true
		k, ok := heaviest(passes, p.Variant, p.Mode, has)
		if !ok {
			continue
		}
		args := []any{runID, k.Variant, k.Mode, k.Level, k.Repetition}
		for _, n := range names {
			args = append(args, n)
		}
		if err := func() error {
			rows, err := db.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				s := sampleRow{Variant: k.Variant, Mode: k.Mode, Level: k.Level, Repetition: k.Repetition}
				if err := rows.Scan(&s.TNS, &s.Metric, &s.Value); err != nil {
					return err
				}
				out = append(out, s)
			}
			return rows.Err()
		}(); err != nil {
			return nil, fmt.Errorf("read telemetry of %s %s %d repetition %d: %w", k.Variant, k.Mode, k.Level, k.Repetition, err)
		}
	}
	return out, nil
}

// loadEvents reads the events or decisions table; both are optional.
func loadEvents(ctx context.Context, db *sql.DB, runID, table string) ([]eventRow, error) {
	cs, err := tableColumns(ctx, db, table)
	if err != nil {
		return nil, err
	}
	if len(cs.have) == 0 {
		return nil, nil
	}
	detail := "detail"
	if table == "decisions" {
		detail = "reason"
	}
	// The two tables share a shape; a column one of them lacks reads as NULL.
	list, err := cs.selectList([]string{"variant", "at_ms", "kind"}, []string{"value_ns", detail, "from_level", "to_level"})
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT "+list+" FROM "+table+" WHERE run_id = ? ORDER BY at_ms", runID)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	var out []eventRow
	for rows.Next() {
		var e eventRow
		var variant, detail sql.NullString
		var value, from, to sql.NullInt64
		if err := rows.Scan(&variant, &e.AtMS, &e.Kind, &value, &detail, &from, &to); err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		e.Variant, e.Detail = variant.String, detail.String
		e.ValueNS, e.FromLevel, e.ToLevel = intPtr(value), intPtr(from), intPtr(to)
		out = append(out, e)
	}
	return out, rows.Err()
}

func intPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

func floatPtr(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	v := n.Float64
	return &v
}
