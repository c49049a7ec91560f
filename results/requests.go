package results

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/extractbench/extractbench"
)

// requestColumns lists every requests column, in table order: the one
// list insertRecords, the readers, the Parquet export and SCHEMA.md's test
// derive from. The first requestKeyColumns are the pass and document, the
// table's unique key. A column without load (the latencies, the field
// flags) is derived from others and recomputed by readers.
var requestColumns = columns[extractbench.Record]{
	{name: "run_id", kind: text, repeats: true, value: func(r *extractbench.Record) any { return r.RunID }, load: func(r *extractbench.Record, c *cell) { r.RunID = c.s }},
	{name: "variant", kind: text, repeats: true, value: func(r *extractbench.Record) any { return r.Variant }, load: func(r *extractbench.Record, c *cell) { r.Variant = c.s }},
	{name: "mode", kind: text, repeats: true, value: func(r *extractbench.Record) any { return string(r.Mode) }, load: func(r *extractbench.Record, c *cell) { r.Mode = extractbench.Mode(c.s) }},
	{name: "level", kind: integer, repeats: true, value: func(r *extractbench.Record) any { return int64(r.Level) }, load: func(r *extractbench.Record, c *cell) { r.Level = c.int() }},
	{name: "repetition", kind: integer, repeats: true, value: func(r *extractbench.Record) any { return int64(r.Repetition) }, load: func(r *extractbench.Record, c *cell) { r.Repetition = c.int() }},
	{name: "doc_id", kind: text, value: func(r *extractbench.Record) any { return r.DocID }, load: func(r *extractbench.Record, c *cell) { r.DocID = c.s }},
	{name: "length_class", kind: text, repeats: true, value: func(r *extractbench.Record) any { return r.LengthClass }, load: func(r *extractbench.Record, c *cell) { r.LengthClass = c.s }},
	{name: "sched_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullInt(r.SchedNS) }, load: func(r *extractbench.Record, c *cell) { r.SchedNS = c.i }},
	{name: "send_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullInt(r.SendNS) }, load: func(r *extractbench.Record, c *cell) { r.SendNS = c.i }},
	{name: "first_byte_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullInt(r.FirstByteNS) }, load: func(r *extractbench.Record, c *cell) { r.FirstByteNS = c.i }},
	{name: "first_token_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullInt(r.FirstTokenNS) }, load: func(r *extractbench.Record, c *cell) { r.FirstTokenNS = c.i }},
	{name: "last_token_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullInt(r.LastTokenNS) }, load: func(r *extractbench.Record, c *cell) { r.LastTokenNS = c.i }},
	{name: "done_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullInt(r.DoneNS) }, load: func(r *extractbench.Record, c *cell) { r.DoneNS = c.i }},
	{name: "ttft_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullSpan(r.TTFT()) }},
	{name: "e2e_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullSpan(r.E2E()) }},
	{name: "e2e_sched_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullSpan(r.E2ESched()) }},
	{name: "client_queue_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullSpan(r.ClientQueue()) }},
	{name: "tpot_ns", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullSpan(r.TPOT()) }},
	{name: "prompt_tokens", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullInt(r.PromptTokens) }, load: func(r *extractbench.Record, c *cell) { r.PromptTokens = c.int() }},
	{name: "completion_tokens", kind: integer, value: func(r *extractbench.Record) any { return int64(r.CompletionTokens) }, load: func(r *extractbench.Record, c *cell) { r.CompletionTokens = c.int() }},
	{name: "usage_reported", kind: flag, value: func(r *extractbench.Record) any { return r.UsageReported }, load: func(r *extractbench.Record, c *cell) { r.UsageReported = c.i != 0 }},
	{name: "finish_reason", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullStr(validText(r.FinishReason)) }, load: func(r *extractbench.Record, c *cell) { r.FinishReason = c.s }},
	{name: "http_status", kind: integer, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullInt(r.HTTPStatus) }, load: func(r *extractbench.Record, c *cell) { r.HTTPStatus = c.int() }},
	{name: "transport_kind", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullStr(r.Kind) }, load: func(r *extractbench.Record, c *cell) { r.Kind = extractbench.TransportKind(c.s) }},
	{name: "transport_detail", kind: text, nullable: true, value: func(r *extractbench.Record) any { return nullStr(validText(r.Detail)) }, load: func(r *extractbench.Record, c *cell) { r.Detail = c.s }},
	{name: "engine_died", kind: flag, value: func(r *extractbench.Record) any { return r.EngineDied }, load: func(r *extractbench.Record, c *cell) { r.EngineDied = c.i != 0 }},
	{name: "error_body", kind: text, nullable: true, value: func(r *extractbench.Record) any { return nullStr(validText(r.ErrorBody)) }, load: func(r *extractbench.Record, c *cell) { r.ErrorBody = c.s }},
	{name: "failure", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullStr(r.Failure) }, load: func(r *extractbench.Record, c *cell) { r.Failure = extractbench.Failure(c.s) }},
	{name: "failure_detail", kind: text, nullable: true, value: func(r *extractbench.Record) any { return nullStr(validText(r.FailureDetail)) }, load: func(r *extractbench.Record, c *cell) { r.FailureDetail = c.s }},
	{name: "strict_parse_ok", kind: flag, value: func(r *extractbench.Record) any { return r.StrictParseOK }, load: func(r *extractbench.Record, c *cell) { r.StrictParseOK = c.i != 0 }},
	{name: "lenient_parse_ok", kind: flag, value: func(r *extractbench.Record) any { return r.LenientParseOK }, load: func(r *extractbench.Record, c *cell) { r.LenientParseOK = c.i != 0 }},
	{name: "schema_ok", kind: flag, value: func(r *extractbench.Record) any { return r.SchemaOK }, load: func(r *extractbench.Record, c *cell) { r.SchemaOK = c.i != 0 }},
	{name: "date_result", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullStr(r.Date) }, load: func(r *extractbench.Record, c *cell) { r.Date = extractbench.FieldResult(c.s) }},
	{name: "amount_result", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullStr(r.Amount) }, load: func(r *extractbench.Record, c *cell) { r.Amount = extractbench.FieldResult(c.s) }},
	{name: "category_result", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullStr(r.Category) }, load: func(r *extractbench.Record, c *cell) { r.Category = extractbench.FieldResult(c.s) }},
	{name: "date_ok", kind: flag, nullable: true, value: func(r *extractbench.Record) any { return fieldOK(r.Date) }},
	{name: "amount_ok", kind: flag, nullable: true, value: func(r *extractbench.Record) any { return fieldOK(r.Amount) }},
	{name: "category_ok", kind: flag, nullable: true, value: func(r *extractbench.Record) any { return fieldOK(r.Category) }},
	{name: "pred_date", kind: text, nullable: true, value: func(r *extractbench.Record) any { return nullPtr(r.Prediction.Date) }, load: func(r *extractbench.Record, c *cell) { r.Prediction.Date = c.strPtr() }},
	{name: "pred_amount", kind: text, nullable: true, value: func(r *extractbench.Record) any { return nullPtr(r.Prediction.Amount) }, load: func(r *extractbench.Record, c *cell) { r.Prediction.Amount = c.strPtr() }},
	{name: "pred_category", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullPtr(r.Prediction.Category) }, load: func(r *extractbench.Record, c *cell) { r.Prediction.Category = c.strPtr() }},
	{name: "accepted", kind: flag, value: func(r *extractbench.Record) any { return r.Accepted }, load: func(r *extractbench.Record, c *cell) { r.Accepted = c.i != 0 }},
	{name: "output", kind: text, value: func(r *extractbench.Record) any { return validText(r.Output) }, load: func(r *extractbench.Record, c *cell) { r.Output = c.s }},
	{name: "expected_date", kind: text, nullable: true, value: func(r *extractbench.Record) any { return nullPtr(r.Expected.Date) }, load: func(r *extractbench.Record, c *cell) { r.Expected.Date = c.strPtr() }},
	{name: "expected_amount", kind: text, nullable: true, value: func(r *extractbench.Record) any { return nullPtr(r.Expected.Amount) }, load: func(r *extractbench.Record, c *cell) { r.Expected.Amount = c.strPtr() }},
	{name: "expected_category", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullPtr(r.Expected.Category) }, load: func(r *extractbench.Record, c *cell) { r.Expected.Category = c.strPtr() }},
	{name: "client_completion_chunks", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return int64(r.ClientChunks) }, load: func(r *extractbench.Record, c *cell) { r.ClientChunks = c.int() }},
	{name: "on_time", kind: flag, nullable: true, value: func(r *extractbench.Record) any { return nullPtr(r.OnTime) }, load: func(r *extractbench.Record, c *cell) { r.OnTime = c.boolPtr() }},
	{name: "endpoint", kind: text, nullable: true, repeats: true, value: func(r *extractbench.Record) any { return nullStr(r.Endpoint) }, load: func(r *extractbench.Record, c *cell) { r.Endpoint = c.s }},
	{name: "cached_prompt_tokens", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullCount(r.CachedPromptTokens) }, load: func(r *extractbench.Record, c *cell) { r.CachedPromptTokens = c.intPtr() }},
	{name: "expected_prompt_tokens", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullCount(r.ExpectedPromptTokens) }, load: func(r *extractbench.Record, c *cell) { r.ExpectedPromptTokens = c.intPtr() }},
}

// requestKeyColumns is how many of requestColumns make the unique key
// (run_id, variant, mode, level, repetition, doc_id).
const requestKeyColumns = 6

// insertRows is how many records one INSERT writes: a VALUES list of
// insertRows rows (len(requestColumns) × insertRows parameters, far below
// SQLite's 32,766) is one statement step instead of insertRows, and the
// per-statement work (reset, clear, the driver's round trips) is paid once.
const insertRows = 32

// insertRequestSQL is an INSERT of n rows that never duplicates a (pass,
// doc): a resumed run that sends a document again keeps the first row,
// which is the primary result. The one row it replaces is one that was
// never a measurement (eval's TransportKind.Measured): the run cancelled
// that request (interrupted), or the client failed before the engine saw it
// (client).
func insertRequestSQL(n int) string {
	return requestColumns.insertSQL("requests", n, `
	ON CONFLICT (`+strings.Join(requestColumns.names()[:requestKeyColumns], ", ")+`) DO UPDATE SET `+requestColumns.updateSet(requestKeyColumns)+`
	WHERE requests.`+unmeasured)
}

// unmeasured is the SQL condition of the rows that are no measurement:
// transport_kind interrupted, client or engine_dead (extractbench.Unmeasured).
// A constant, as the pass queries built on it are; TestUnmeasured_Kinds
// holds it to that list.
const unmeasured = `transport_kind IN ('` + string(extractbench.TransportInterrupted) + `', '` + string(extractbench.TransportClient) +
	`', '` + string(extractbench.TransportEngineDead) + `')`

// measured is the SQL condition that leaves out the unmeasured rows: no
// reader sees them as records, and resume sends their documents again. A
// NULL kind (a completed exchange) is measured: NULL IN (...) is NULL,
// which IS NOT 1. Written with the column first, so that a table alias
// can prefix it ("s." + measured).
const measured = unmeasured + ` IS NOT 1`

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
	return int64(*p)
}

// nullPtr is NULL for a nil pointer, else the value it points to.
func nullPtr[V any](p *V) any {
	if p == nil {
		return nil
	}
	return *p
}

// validText is s as valid UTF-8, an invalid byte as U+FFFD: the texts an
// engine's bytes make (its output, error body, the client's detail) are
// stored so, since DuckDB refuses a Parquet string that is not UTF-8. The
// engine client cleans them already; this is the store's own guarantee.
// A NUL byte is written as the six characters \u0000: SQLite's length()
// and every C reader stop at the first NUL, so a body would read as cut.
func validText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD") // no copy when valid
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", `\u0000`)
	}
	return s
}

// requestValues returns the row of r, in the order of requestColumns.
func requestValues(r extractbench.Record) []any {
	return requestColumns.values(make([]any, 0, len(requestColumns)), &r)
}

// requestInserts are the writer's prepared INSERTs of requests, on its one
// connection: one of insertRows rows, one of a single row (for a batch's
// last records, and to name the record a failed statement held). The
// writer goroutine alone uses them; Close closes them.
type requestInserts struct {
	many, one *sql.Stmt
	vals      []any        // reused between statements
	fields    fieldInserts // the requests' request_fields rows, written before them
}

// insertRecords commits recs in one transaction, insertRows records per
// statement, each statement's request_fields rows before it (insertFieldSQL).
// It runs on the writer goroutine only.
func (s *Store) insertRecords(recs []extractbench.Record) (err error) {
	ctx := context.Background() // records outlive a canceled run: they are what resume reads
	n := len(recs)
	ins := &s.inserts
	if ins.many == nil {
		many, err := s.wdb.PrepareContext(ctx, insertRequestSQL(insertRows))
		if err != nil {
			return fmt.Errorf("prepare insert of requests: %w", err)
		}
		one, err := s.wdb.PrepareContext(ctx, insertRequestSQL(1))
		if err != nil {
			many.Close()
			return fmt.Errorf("prepare insert of requests: %w", err)
		}
		ins.many, ins.one = many, one
	}
	if err := ins.fields.prepare(ctx, s.wdb); err != nil {
		return err
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin insert of %d requests: %w", len(recs), err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	many, one := tx.StmtContext(ctx, ins.many), tx.StmtContext(ctx, ins.one)
	for len(recs) > 0 {
		chunk, stmt := recs, one
		if len(recs) >= insertRows {
			chunk, stmt = recs[:insertRows], many
		} else {
			chunk = recs[:1]
		}
		ins.vals = ins.vals[:0]
		for i := range chunk {
			r := s.redactRecord(chunk[i])
			ins.vals = requestColumns.values(ins.vals, &r)
			ins.fields.add(&r)
		}
		if err := ins.fields.insert(ctx, tx); err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, ins.vals...); err != nil {
			return s.insertFailed(ctx, one, chunk, err)
		}
		recs = recs[len(chunk):]
	}
	clear(ins.vals) // drop the outputs' strings for the GC
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit %d requests: %w", n, err)
	}
	return nil
}

// insertFailed names the record of chunk that a failed statement could not
// insert (SQLite undid the statement, not the transaction), by inserting
// them one at a time; the caller rolls the transaction back.
func (s *Store) insertFailed(ctx context.Context, one *sql.Stmt, chunk []extractbench.Record, err error) error {
	for _, r := range chunk {
		r = s.redactRecord(r)
		if _, err := one.ExecContext(ctx, requestValues(r)...); err != nil {
			return fmt.Errorf("insert request %s of pass %s: %w", r.DocID, extractbench.PassKeyOf(r), err)
		}
	}
	return fmt.Errorf("insert %d requests from %s of pass %s: %w", len(chunk), chunk[0].DocID, extractbench.PassKeyOf(chunk[0]), err)
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
	return r.eachRowOf(ctx, requestColumns, fn, where, args...)
}

// eachRowOf is eachRow reading only the columns cols (of requestColumns);
// the record's other fields are zero.
func (r *reader) eachRowOf(ctx context.Context, cols columns[extractbench.Record], fn func(*extractbench.Record), where string, args ...any) error {
	return r.eachScanned(ctx, newScanner(cols), fn, where, args...)
}

// eachScanned is eachRowOf reading what sc selects.
func (r *reader) eachScanned(ctx context.Context, sc *scanner[extractbench.Record], fn func(*extractbench.Record), where string, args ...any) error {
	// One transaction: the requests and their fields read one snapshot.
	tx, err := r.rdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT `+sc.selectList()+`
		FROM requests WHERE `+where+` ORDER BY rowid`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	fields, err := openFieldCursor(ctx, tx, where, args...)
	if err != nil {
		return fmt.Errorf("read request fields: %w", err)
	}
	defer fields.close()
	declared, err := declaredRuns(ctx, tx)
	if err != nil {
		return err
	}
	for rows.Next() {
		rec, err := sc.scan(rows)
		if err != nil {
			return err
		}
		if rec.Score.Fields, err = fields.fieldsOf(&rec); err != nil {
			return fmt.Errorf("read request fields: %w", err)
		}
		rec.Score.Declared = declared[rec.RunID] && rec.Score.Fields != nil
		fn(&rec)
	}
	return rows.Err()
}

// declaredRuns is the runs whose protocol declared its fields (the stored
// manifest's protocol has fields:): their records are scored on the
// declared fields even where those are named date, amount and category.
func declaredRuns(ctx context.Context, q querier) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT run_id FROM runs WHERE json_type(manifest, '$.protocol.fields') = 'array'`)
	if err != nil {
		return nil, fmt.Errorf("read which runs declare their fields: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}
