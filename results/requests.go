package results

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/extractbench/extractbench"
)

// requestColumns are the columns of requests that insertRecords writes, in
// the order of requestValues.
var requestColumns = []string{
	"run_id", "variant", "mode", "level", "repetition", "doc_id", "length_class",
	"sched_ns", "send_ns", "first_byte_ns", "first_token_ns", "last_token_ns", "done_ns",
	"ttft_ns", "e2e_ns", "e2e_sched_ns", "client_queue_ns", "tpot_ns",
	"prompt_tokens", "completion_tokens", "usage_reported",
	"finish_reason", "http_status", "transport_kind", "transport_detail", "engine_died", "error_body",
	"failure", "failure_detail",
	"strict_parse_ok", "lenient_parse_ok", "schema_ok",
	"date_result", "amount_result", "category_result",
	"date_ok", "amount_ok", "category_ok",
	"pred_date", "pred_amount", "pred_category",
	"accepted", "output",
	"expected_date", "expected_amount", "expected_category",
	"client_completion_chunks", "on_time", "endpoint", "cached_prompt_tokens", "expected_prompt_tokens",
}

// insertRequestSQL never duplicates a (pass, doc): a resumed run that sends a
// document again keeps the first row, which is the primary result. The one
// row it replaces is one that was never a measurement (eval's
// TransportKind.Measured): the run cancelled that request (interrupted),
// or the client failed before the engine saw it (client).
var insertRequestSQL = `INSERT INTO requests (` + strings.Join(requestColumns, ", ") + `)
	VALUES (` + strings.TrimSuffix(strings.Repeat("?, ", len(requestColumns)), ", ") + `)
	ON CONFLICT (run_id, variant, mode, level, repetition, doc_id) DO UPDATE SET ` + upsertSet() + `
	WHERE requests.` + unmeasured

// unmeasured is the SQL condition of the rows that are no measurement:
// transport_kind interrupted or client (extractbench.TransportKind.Measured).
const unmeasured = `transport_kind IN ('` + string(extractbench.TransportInterrupted) + `', '` + string(extractbench.TransportClient) + `')`

// measured is the SQL condition that leaves out the unmeasured rows: no
// reader sees them as records, and resume sends their documents again. A
// NULL kind (a completed exchange) is measured: NULL IN (...) is NULL,
// which IS NOT 1. Written with the column first, so that a table alias
// can prefix it ("s." + measured).
const measured = unmeasured + ` IS NOT 1`

func upsertSet() string {
	set := make([]string, 0, len(requestColumns))
	for _, c := range requestColumns[6:] { // the key columns stay
		set = append(set, c+" = excluded."+c)
	}
	return strings.Join(set, ", ")
}

// nullSpan is NULL for a latency that is undefined (extractbench.Span).
func nullSpan(ns int64, ok bool) any {
	if !ok {
		return nil
	}
	return ns
}

// fieldOK is NULL for a field that was never scored, else whether it is right.
func fieldOK(f extractbench.FieldResult) any {
	if f == extractbench.Unscored {
		return nil
	}
	return f.OK()
}

// nullCount is NULL for a count the engine did not report.
func nullCount(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullBool(p *bool) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullPtr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// validText is s as valid UTF-8, an invalid byte as U+FFFD: the texts an
// engine's bytes make (its output, error body, the client's detail) are
// stored so, since DuckDB refuses a Parquet string that is not UTF-8. The
// engine client cleans them already; this is the store's own guarantee.
func validText(s string) string { return strings.ToValidUTF8(s, "\uFFFD") } // no copy when valid

// requestValues returns the row of r, in the order of requestColumns.
func requestValues(r extractbench.Record) []any {
	return []any{
		r.RunID, r.Variant, r.Mode, r.Level, r.Repetition, r.DocID, r.LengthClass,
		nullInt(r.SchedNS), nullInt(r.SendNS), nullInt(r.FirstByteNS), nullInt(r.FirstTokenNS), nullInt(r.LastTokenNS), nullInt(r.DoneNS),
		nullSpan(r.TTFT()), nullSpan(r.E2E()), nullSpan(r.E2ESched()), nullSpan(r.ClientQueue()), nullSpan(r.TPOT()),
		nullInt(r.PromptTokens), r.CompletionTokens, r.UsageReported,
		nullStr(validText(r.FinishReason)), nullInt(r.HTTPStatus), nullStr(r.Kind), nullStr(validText(r.Detail)), r.EngineDied, nullStr(validText(r.ErrorBody)),
		nullStr(r.Failure), nullStr(validText(r.FailureDetail)),
		r.StrictParseOK, r.LenientParseOK, r.SchemaOK,
		nullStr(r.Date), nullStr(r.Amount), nullStr(r.Category),
		fieldOK(r.Date), fieldOK(r.Amount), fieldOK(r.Category),
		nullPtr(r.Prediction.Date), nullPtr(r.Prediction.Amount), nullPtr(r.Prediction.Category),
		r.Accepted, validText(r.Output),
		nullPtr(r.Expected.Date), nullPtr(r.Expected.Amount), nullPtr(r.Expected.Category),
		r.ClientChunks, nullBool(r.OnTime), nullStr(r.Endpoint), nullCount(r.CachedPromptTokens), nullCount(r.ExpectedPromptTokens),
	}
}

// insertRecords commits recs in one transaction. It runs on the writer
// goroutine only.
func (s *Store) insertRecords(recs []extractbench.Record) (err error) {
	ctx := context.Background() // records outlive a canceled run: they are what resume reads
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin insert of %d requests: %w", len(recs), err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	stmt, err := tx.PrepareContext(ctx, insertRequestSQL)
	if err != nil {
		return fmt.Errorf("prepare insert of requests: %w", err)
	}
	defer stmt.Close()
	for _, r := range recs {
		if _, err := stmt.ExecContext(ctx, requestValues(s.redactRecord(r))...); err != nil {
			return fmt.Errorf("insert request %s of pass %s: %w", r.DocID, extractbench.PassKeyOf(r), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit %d requests: %w", len(recs), err)
	}
	return nil
}

// DoneDocs returns the ids of the documents the pass has a measured row for, after
// flushing what was added before. A resumed pass sends only the others.
func (s *Store) DoneDocs(ctx context.Context, key extractbench.PassKey) (*DocSet, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, fmt.Errorf("done docs of pass %s: %w", key, err)
	}
	// The unique key (run, variant, mode, level, repetition, doc_id) gives
	// the ids in byte order, SQLite's BINARY collation, which is Go's.
	rows, err := s.rdb.QueryContext(ctx, `SELECT doc_id FROM requests
		WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ? AND `+measured+` ORDER BY doc_id`,
		key.RunID, key.Variant, key.Mode, key.Level, key.Repetition)
	if err != nil {
		return nil, fmt.Errorf("done docs of pass %s: %w", key, err)
	}
	defer rows.Close()
	done := &DocSet{}
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("done docs of pass %s: %w", key, err)
		}
		done.ids = append(done.ids, id...)
		done.ends = append(done.ends, len(done.ids))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("done docs of pass %s: %w", key, err)
	}
	return done, nil
}

// DocSet is a set of document ids held packed and sorted (one byte array
// and an end per id), so that the documents a resumed pass of a million
// has already measured take their ids' bytes and 8 bytes each, not a map.
type DocSet struct {
	ids  []byte
	ends []int // id i is ids[ends[i-1]:ends[i]], in ascending byte order
}

// Len is the number of ids.
func (d *DocSet) Len() int { return len(d.ends) }

func (d *DocSet) at(i int) []byte {
	start := 0
	if i > 0 {
		start = d.ends[i-1]
	}
	return d.ids[start:d.ends[i]]
}

// Has reports whether id is in the set.
func (d *DocSet) Has(id string) bool {
	i := sort.Search(len(d.ends), func(i int) bool { return string(d.at(i)) >= id })
	return i < len(d.ends) && string(d.at(i)) == id
}

// PassRecords returns the pass's rows as Records, in the order they were
// stored, after flushing what was added before. Every stored field round-trips;
// the derived columns (ttft_ns, e2e_ns, ...) are recomputed from the instants.
func (s *Store) PassRecords(ctx context.Context, key extractbench.PassKey) ([]extractbench.Record, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, fmt.Errorf("records of pass %s: %w", key, err)
	}
	recs, err := s.records(ctx, `run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ?`,
		key.RunID, key.Variant, key.Mode, key.Level, key.Repetition)
	if err != nil {
		return nil, fmt.Errorf("records of pass %s: %w", key, err)
	}
	return recs, nil
}

// records reads the measured requests rows matching where (a SQL condition
// on requests' columns with ? placeholders), in the order they were stored;
// interrupted rows are left out.
func (r *reader) records(ctx context.Context, where string, args ...any) ([]extractbench.Record, error) {
	var recs []extractbench.Record
	err := r.eachRecord(ctx, func(rec *extractbench.Record) { recs = append(recs, *rec) }, where, args...)
	return recs, err
}

// eachRecord is records one row at a time.
func (r *reader) eachRecord(ctx context.Context, fn func(*extractbench.Record), where string, args ...any) error {
	return r.eachRow(ctx, fn, measured+` AND (`+where+`)`, args...)
}

// eachRow is eachRecord with the unmeasured rows too.
func (r *reader) eachRow(ctx context.Context, fn func(*extractbench.Record), where string, args ...any) error {
	rows, err := r.rdb.QueryContext(ctx, `SELECT
		run_id, variant, mode, level, repetition, doc_id, length_class,
		sched_ns, send_ns, first_byte_ns, first_token_ns, last_token_ns, done_ns,
		prompt_tokens, completion_tokens, usage_reported,
		finish_reason, http_status, transport_kind, transport_detail, engine_died, error_body,
		failure, failure_detail, strict_parse_ok, lenient_parse_ok, schema_ok,
		date_result, amount_result, category_result,
		pred_date, pred_amount, pred_category, accepted, output,
		expected_date, expected_amount, expected_category, client_completion_chunks, on_time, endpoint,
		cached_prompt_tokens, expected_prompt_tokens
		FROM requests WHERE `+where+` ORDER BY rowid`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		rec, err := scanRecord(rows)
		if err != nil {
			return err
		}
		fn(&rec)
	}
	return rows.Err()
}

// scanRecord reads one row of PassRecords' query back into a Record: NULL
// becomes the zero the Record gave it.
func scanRecord(rows *sql.Rows) (extractbench.Record, error) {
	var (
		r                                    extractbench.Record
		sched, send, fbyte, ftok, ltok, done sql.NullInt64
		prompt, httpStatus                   sql.NullInt64
		finish, kind, detail, errBody        sql.NullString
		failure, failDetail                  sql.NullString
		dateRes, amountRes, catRes           sql.NullString
		chunks                               sql.NullInt64
		onTime                               sql.NullBool
		endpoint                             sql.NullString
		cached, expected                     sql.NullInt64
	)
	err := rows.Scan(&r.RunID, &r.Variant, &r.Mode, &r.Level, &r.Repetition, &r.DocID, &r.LengthClass,
		&sched, &send, &fbyte, &ftok, &ltok, &done,
		&prompt, &r.CompletionTokens, &r.UsageReported,
		&finish, &httpStatus, &kind, &detail, &r.EngineDied, &errBody,
		&failure, &failDetail, &r.StrictParseOK, &r.LenientParseOK, &r.SchemaOK,
		&dateRes, &amountRes, &catRes,
		&r.Prediction.Date, &r.Prediction.Amount, &r.Prediction.Category, &r.Accepted, &r.Output,
		&r.Expected.Date, &r.Expected.Amount, &r.Expected.Category, &chunks, &onTime, &endpoint, &cached, &expected)
	if err != nil {
		return r, err
	}
	r.SchedNS, r.SendNS, r.FirstByteNS = sched.Int64, send.Int64, fbyte.Int64
	r.FirstTokenNS, r.LastTokenNS, r.DoneNS = ftok.Int64, ltok.Int64, done.Int64
	r.PromptTokens = int(prompt.Int64)
	r.ClientChunks = int(chunks.Int64)
	if onTime.Valid {
		r.OnTime = &onTime.Bool
	}
	r.Endpoint = endpoint.String
	if cached.Valid {
		n := int(cached.Int64)
		r.CachedPromptTokens = &n
	}
	if expected.Valid {
		n := int(expected.Int64)
		r.ExpectedPromptTokens = &n
	}
	r.HTTPStatus = int(httpStatus.Int64)
	r.FinishReason = finish.String
	r.Kind = extractbench.TransportKind(kind.String)
	r.Detail = detail.String
	r.ErrorBody = errBody.String
	r.Failure = extractbench.Failure(failure.String)
	r.FailureDetail = failDetail.String
	r.Date = extractbench.FieldResult(dateRes.String)
	r.Amount = extractbench.FieldResult(amountRes.String)
	r.Category = extractbench.FieldResult(catRes.String)
	return r, nil
}
