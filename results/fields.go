package results

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
)

// requestField is one row of request_fields: one field of one request,
// keyed as the request's row is (its pass and document) plus the field.
type requestField struct {
	key      extractbench.PassKey
	docID    string
	position int // the field's index in Score.Fields: the protocol's order
	extractbench.FieldScore
}

// requestFieldColumns lists every request_fields column (see
// requestColumns); the first requestFieldKeyColumns are the request's key,
// then the field. correct is derived (FieldScore.Correct) and not read back.
var requestFieldColumns = columns[requestField]{
	textField("run_id", func(f *requestField) *string { return &f.key.RunID }).repeated(),
	textField("variant", func(f *requestField) *string { return &f.key.Variant }).repeated(),
	textField("mode", func(f *requestField) *extractbench.Mode { return &f.key.Mode }).repeated(),
	intField("level", func(f *requestField) *int { return &f.key.Level }).repeated(),
	intField("repetition", func(f *requestField) *int { return &f.key.Repetition }).repeated(),
	textField("doc_id", func(f *requestField) *string { return &f.docID }),
	textField("field", func(f *requestField) *string { return &f.Name }).repeated(),
	intField("position", func(f *requestField) *int { return &f.position }).repeated(),
	optText("expected", func(f *requestField) *string { return &f.Expected }),
	optText("got", func(f *requestField) *string { return &f.Got }),
	optText("result", func(f *requestField) *extractbench.FieldResult { return &f.Result }).repeated(),
	{name: "correct", kind: flag, value: func(f *requestField) any { return f.Correct() }},
	optText("reason", func(f *requestField) *string { return &f.Reason }),
	intField("tp", func(f *requestField) *int { return &f.TP }),
	intField("fp", func(f *requestField) *int { return &f.FP }),
	intField("fn", func(f *requestField) *int { return &f.FN }),
}

// requestFieldKeyColumns is how many of requestFieldColumns make the
// primary key: the request's (requestKeyColumns), then field.
const requestFieldKeyColumns = requestKeyColumns + 1

// passField is one row of pass_fields: one field of one pass.
type passField struct {
	key extractbench.PassKey
	extractbench.PassField
}

// passFieldColumns lists every pass_fields column (see passColumns); the
// first passKeyColumns and field make the primary key.
var passFieldColumns = columns[passField]{
	textField("run_id", func(f *passField) *string { return &f.key.RunID }),
	textField("variant", func(f *passField) *string { return &f.key.Variant }),
	textField("mode", func(f *passField) *extractbench.Mode { return &f.key.Mode }),
	intField("level", func(f *passField) *int { return &f.key.Level }),
	intField("repetition", func(f *passField) *int { return &f.key.Repetition }),
	textField("field", func(f *passField) *string { return &f.Name }),
	intField("position", func(f *passField) *int { return &f.Position }),
	intField("tp", func(f *passField) *int64 { return &f.TP }),
	intField("fp", func(f *passField) *int64 { return &f.FP }),
	intField("fn", func(f *passField) *int64 { return &f.FN }),
	intField("tn", func(f *passField) *int64 { return &f.TN }),
	intField("unscored", func(f *passField) *int64 { return &f.Unscored }),
	realField("precision", func(f *passField) *float64 { return &f.Precision }),
	realField("recall", func(f *passField) *float64 { return &f.Recall }),
	realField("f1", func(f *passField) *float64 { return &f.F1 }),
}

// fieldRows appends the request_fields rows of r to rows: its field
// scores, when it is a measurement. An unmeasured row is replaced when
// its document is sent again, and readers never see it: it has no fields,
// so that its replacement's are the only ones.
func fieldRows(rows []requestField, r *extractbench.Record) []requestField {
	if !r.Kind.Measured() {
		return rows
	}
	key := extractbench.PassKeyOf(*r)
	for i, f := range r.Score.Fields {
		rows = append(rows, requestField{key: key, docID: r.DocID, position: i, FieldScore: f})
	}
	return rows
}

// insertFieldSQL inserts n request_fields rows, those of a request whose
// row the same transaction writes next: only where requests holds no
// measured row of that (pass, document) yet, since the requests INSERT
// keeps such a row (insertRequestSQL) and its fields with it. Run before
// the requests INSERT, in the same transaction, a killed run's resume can
// never leave field rows of another answer than its request row's.
func insertFieldSQL(n int) string {
	cols := requestFieldColumns.names()
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var match []string
	for i, c := range cols[:requestKeyColumns] {
		match = append(match, "r."+c+" = v.column"+strconv.Itoa(i+1))
	}
	return `INSERT INTO request_fields (` + strings.Join(cols, ", ") + `)
	SELECT * FROM (VALUES ` + strings.TrimSuffix(strings.Repeat(one+", ", n), ", ") + `) v
	WHERE NOT EXISTS (SELECT 1 FROM requests r WHERE ` + strings.Join(match, " AND ") + ` AND r.` + measured + `)
	ON CONFLICT (` + strings.Join(cols[:requestFieldKeyColumns], ", ") + `) DO NOTHING`
}

// fieldInserts are the writer's prepared INSERTs of request_fields (see
// requestInserts).
type fieldInserts struct {
	many, one *sql.Stmt
	vals      []any
	rows      []requestField
}

// prepare prepares the statements on the writer's connection, once.
func (ins *fieldInserts) prepare(ctx context.Context, db *sql.DB) error {
	if ins.many != nil {
		return nil
	}
	many, err := db.PrepareContext(ctx, insertFieldSQL(insertRows))
	if err != nil {
		return fmt.Errorf("prepare insert of request fields: %w", err)
	}
	one, err := db.PrepareContext(ctx, insertFieldSQL(1))
	if err != nil {
		many.Close()
		return fmt.Errorf("prepare insert of request fields: %w", err)
	}
	ins.many, ins.one = many, one
	return nil
}

// close closes the prepared statements.
func (ins *fieldInserts) close() {
	if ins.many != nil {
		ins.many.Close()
		ins.one.Close()
		ins.many, ins.one = nil, nil
	}
}

// add queues the field rows of r (redacted) for the next insert.
func (ins *fieldInserts) add(r *extractbench.Record) { ins.rows = fieldRows(ins.rows, r) }

// insert writes the rows queued by add in tx, insertRows rows per
// statement, and empties the queue.
func (ins *fieldInserts) insert(ctx context.Context, tx *sql.Tx) error {
	if len(ins.rows) == 0 {
		return nil
	}
	many, one := tx.StmtContext(ctx, ins.many), tx.StmtContext(ctx, ins.one)
	for rows := ins.rows; len(rows) > 0; {
		chunk, stmt := rows[:1], one
		if len(rows) >= insertRows {
			chunk, stmt = rows[:insertRows], many
		}
		ins.vals = ins.vals[:0]
		for i := range chunk {
			ins.vals = requestFieldColumns.values(ins.vals, &chunk[i])
		}
		if _, err := stmt.ExecContext(ctx, ins.vals...); err != nil {
			return fmt.Errorf("insert field %s of request %s of pass %s: %w", chunk[0].Name, chunk[0].docID, chunk[0].key, err)
		}
		rows = rows[len(chunk):]
	}
	clear(ins.vals)
	clear(ins.rows)
	ins.rows = ins.rows[:0]
	return nil
}

// fieldCursor reads the request_fields rows of the requests a scan reads
// (the same condition, the same order: the requests' rowid, then each
// request's fields by position), one request at a time, beside it.
type fieldCursor struct {
	rows *sql.Rows
	sc   *scanner[requestField]
	next *requestField // the row read ahead, nil at the end
	err  error
}

// openFieldCursor queries the fields of the requests rows matching where,
// in q (the transaction the requests are read in, so that both read one
// snapshot).
func openFieldCursor(ctx context.Context, q querier, where string, args ...any) (*fieldCursor, error) {
	sc := newScanner(requestFieldColumns)
	var on []string
	for _, c := range requestFieldColumns.names()[:requestKeyColumns] {
		on = append(on, "f."+c+" = q."+c)
	}
	sel := strings.ReplaceAll(", "+sc.selectList(), ", ", ", f.")[2:]
	rows, err := q.QueryContext(ctx, `SELECT `+sel+`
		FROM (SELECT rowid AS rid, `+strings.Join(requestColumns.names()[:requestKeyColumns], ", ")+` FROM requests WHERE `+where+`) q
		CROSS JOIN request_fields f ON `+strings.Join(on, " AND ")+`
		ORDER BY q.rid, f.position`, args...)
	if err != nil {
		return nil, err
	}
	c := &fieldCursor{rows: rows, sc: sc}
	c.advance()
	return c, c.err
}

func (c *fieldCursor) advance() {
	c.next = nil
	if !c.rows.Next() {
		c.err = c.rows.Err()
		return
	}
	f, err := c.sc.scan(c.rows)
	if err != nil {
		c.err = err
		return
	}
	c.next = &f
}

// fieldsOf returns the field scores of rec, the request the scan has
// reached: the rows read ahead that carry its key (nil when none do).
func (c *fieldCursor) fieldsOf(rec *extractbench.Record) ([]extractbench.FieldScore, error) {
	var out []extractbench.FieldScore
	for c.next != nil && c.next.docID == rec.DocID && c.next.key == extractbench.PassKeyOf(*rec) {
		out = append(out, c.next.FieldScore)
		c.advance()
	}
	return out, c.err
}

func (c *fieldCursor) close() error { return c.rows.Close() }

// putPassFields replaces the pass_fields rows of p's pass with p.Fields,
// in the transaction that writes its passes row.
func putPassFields(ctx context.Context, tx *sql.Tx, p *extractbench.Pass) error {
	key := extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}
	if _, err := tx.ExecContext(ctx, `DELETE FROM pass_fields WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ?`,
		key.RunID, key.Variant, key.Mode, key.Level, key.Repetition); err != nil {
		return fmt.Errorf("replace fields of pass %s: %w", key, err)
	}
	if len(p.Fields) == 0 {
		return nil
	}
	vals := make([]any, 0, len(p.Fields)*len(passFieldColumns))
	for _, f := range p.Fields {
		vals = passFieldColumns.values(vals, &passField{key: key, PassField: f})
	}
	if _, err := tx.ExecContext(ctx, passFieldColumns.insertSQL("pass_fields", len(p.Fields), ""), vals...); err != nil {
		return fmt.Errorf("put fields of pass %s: %w", key, err)
	}
	return nil
}

// passFields reads the pass_fields rows matching where (a condition on
// its columns) by pass, each pass's in the protocol's order.
func (r *reader) passFields(ctx context.Context, where string, args ...any) (map[extractbench.PassKey][]extractbench.PassField, error) {
	rows, err := selectRows(ctx, r.rdb, passFieldColumns, `pass_fields WHERE `+where+` ORDER BY run_id, variant, mode, level, repetition, position`, args...)
	if err != nil {
		return nil, err
	}
	out := map[extractbench.PassKey][]extractbench.PassField{}
	for _, f := range rows {
		out[f.key] = append(out[f.key], f.PassField)
	}
	return out, nil
}
