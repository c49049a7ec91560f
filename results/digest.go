package results

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
)

// Digest is what a run recorded, when it ended, of one pass's measured
// request rows (the digests table): how many, and a SHA-256 over their
// canonical form, so that a merge can tell rows deleted, added or edited
// since. A shard's run writes its digests (Store.SealRun) as it ends; a
// run that goes back to running loses them (SetRunStatus), so a present
// digest always describes the rows its run left.
type Digest struct {
	Key     extractbench.PassKey
	Rows    int64
	SHA256  string
	Columns []string // the requests columns covered, in order
	// FieldRows, FieldSHA256 and FieldColumns are the same over the pass's
	// request_fields rows (schema version 17). FieldSHA256 is "" in a
	// digest written before: it covers the requests rows alone.
	FieldRows    int64
	FieldSHA256  string
	FieldColumns []string
}

// CoversFields reports whether d covers its pass's request_fields rows
// too: a digest written before schema version 17 does not.
func (d Digest) CoversFields() bool { return d.FieldSHA256 != "" }

// digestColumns lists every digests column, in table order (see
// requestColumns).
var digestColumns = columns[Digest]{
	{name: "run_id", kind: text, value: func(d *Digest) any { return d.Key.RunID }, load: func(d *Digest, c *cell) { d.Key.RunID = c.s }},
	{name: "variant", kind: text, value: func(d *Digest) any { return d.Key.Variant }, load: func(d *Digest, c *cell) { d.Key.Variant = c.s }},
	{name: "mode", kind: text, value: func(d *Digest) any { return string(d.Key.Mode) }, load: func(d *Digest, c *cell) { d.Key.Mode = extractbench.Mode(c.s) }},
	{name: "level", kind: integer, value: func(d *Digest) any { return int64(d.Key.Level) }, load: func(d *Digest, c *cell) { d.Key.Level = c.int() }},
	{name: "repetition", kind: integer, value: func(d *Digest) any { return int64(d.Key.Repetition) }, load: func(d *Digest, c *cell) { d.Key.Repetition = c.int() }},
	{name: "row_count", kind: integer, value: func(d *Digest) any { return d.Rows }, load: func(d *Digest, c *cell) { d.Rows = c.i }},
	{name: "sha256", kind: text, value: func(d *Digest) any { return d.SHA256 }, load: func(d *Digest, c *cell) { d.SHA256 = c.s }},
	{name: "columns", kind: text, value: func(d *Digest) any { return strings.Join(d.Columns, ",") }, load: func(d *Digest, c *cell) { d.Columns = strings.Split(c.s, ",") }},
	{name: "field_row_count", kind: integer, nullable: true, value: func(d *Digest) any { return ifFields(d, d.FieldRows) }, load: func(d *Digest, c *cell) { d.FieldRows = c.i }},
	optText("field_sha256", func(d *Digest) *string { return &d.FieldSHA256 }),
	{name: "field_columns", kind: text, nullable: true, value: func(d *Digest) any { return ifFields(d, strings.Join(d.FieldColumns, ",")) },
		load: func(d *Digest, c *cell) {
			if c.valid {
				d.FieldColumns = strings.Split(c.s, ",")
			}
		}},
}

// ifFields is v, or NULL for a digest that does not cover its field rows.
func ifFields(d *Digest, v any) any {
	if !d.CoversFields() {
		return nil
	}
	return v
}

// digestHeader starts every digest's input: the form's version, then the
// columns covered, so that the same rows over other columns never match;
// fieldDigestHeader that of a digest of request_fields rows.
const (
	digestHeader      = "extractbench requests digest v1\n"
	fieldDigestHeader = "extractbench request_fields digest v1\n"
)

// The tags of a value in a digest's input: NULL, an integer (8 bytes,
// big-endian), a real (its IEEE 754 bits) or text (a uvarint length, then
// its bytes).
const (
	tagNull byte = iota
	tagInt
	tagReal
	tagText
)

// auditColumns are the columns a PassAudit judges a row by, beside the
// digest's.
var auditColumns = []string{"doc_id", "accepted", "failure", "date_ok", "amount_ok", "category_ok"}

// PassAudit is what AuditPass found in one pass's measured rows.
type PassAudit struct {
	Rows   int64
	SHA256 string // over the columns asked for; "" when none was
	// MissingColumns are columns asked for that the requests table lacks
	// (no SHA256 then): a digest of columns the rows no longer have.
	MissingColumns []string
	// Foreign counts the rows whose document the shard does not hold
	// (holds false); ForeignIDs names the first of them.
	Foreign    int64
	ForeignIDs []string
	// Contradicted counts the rows whose stored verdict contradicts their
	// stored scores: accepted with a failure class or a wrong field, or not
	// accepted without a failure class. Every row the scorer writes has
	// accepted = 1 exactly when failure is NULL, and then all three fields
	// right; ContradictedRows names the first, with what contradicts.
	Contradicted     int64
	ContradictedRows []string
}

// AuditPass reads the measured rows of pass key in doc_id order and returns
// their count, the SHA-256 of columns over them (none when columns is
// empty), the rows whose document holds rejects (nil: none is checked) and
// the rows whose verdict contradicts their scores; maxExamples of each are
// named. One row at a time: a pass of a million costs no memory.
func (r *reader) AuditPass(ctx context.Context, key extractbench.PassKey, columns []string, holds func(id string) bool, maxExamples int) (PassAudit, error) {
	return auditPass(ctx, r.rdb, key, columns, holds, maxExamples)
}

func auditPass(ctx context.Context, q querier, key extractbench.PassKey, columns []string, holds func(string) bool, maxExamples int) (PassAudit, error) {
	var a PassAudit
	have, err := tableColumns(ctx, q, "main", "requests")
	if err != nil {
		return a, fmt.Errorf("audit pass %s: %w", key, err)
	}
	for _, c := range columns {
		if !slices.Contains(have, c) {
			a.MissingColumns = append(a.MissingColumns, c)
		}
	}
	hashed := columns
	if len(a.MissingColumns) > 0 {
		hashed = nil
	}
	sel := slices.Clone(hashed)
	at := map[string]int{}
	for _, c := range auditColumns {
		i := slices.Index(sel, c)
		if i < 0 {
			i = len(sel)
			sel = append(sel, c)
		}
		at[c] = i
	}
	var h hash.Hash
	if len(hashed) > 0 {
		h = sha256.New()
		h.Write([]byte(digestHeader + strings.Join(hashed, ",") + "\n"))
	}
	rows, err := q.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM requests
		WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ? AND `+measured+` ORDER BY doc_id`,
		key.RunID, key.Variant, key.Mode, key.Level, key.Repetition)
	if err != nil {
		return a, fmt.Errorf("audit pass %s: %w", key, err)
	}
	defer rows.Close()
	vals := make([]any, len(sel))
	ptrs := make([]any, len(sel))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var buf []byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return a, fmt.Errorf("audit pass %s: %w", key, err)
		}
		a.Rows++
		if h != nil {
			buf = buf[:0]
			for _, v := range vals[:len(hashed)] {
				if buf, err = appendValue(buf, v); err != nil {
					return a, fmt.Errorf("audit pass %s: %w", key, err)
				}
			}
			h.Write(buf)
		}
		id := asText(vals[at["doc_id"]])
		if holds != nil && !holds(id) {
			if a.Foreign++; len(a.ForeignIDs) < maxExamples {
				a.ForeignIDs = append(a.ForeignIDs, id)
			}
		}
		if why := contradiction(vals, at); why != "" {
			if a.Contradicted++; len(a.ContradictedRows) < maxExamples {
				a.ContradictedRows = append(a.ContradictedRows, id+": "+why)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return a, fmt.Errorf("audit pass %s: %w", key, err)
	}
	if h != nil {
		a.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	return a, nil
}

// contradiction says how a row's stored verdict contradicts its stored
// scores, or "" when it does not.
func contradiction(vals []any, at map[string]int) string {
	accepted := vals[at["accepted"]] == int64(1)
	failure := vals[at["failure"]]
	switch {
	case accepted && failure != nil:
		return fmt.Sprintf("accepted = 1 with failure %s", asText(failure))
	case !accepted && failure == nil:
		return "accepted = 0 without a failure class"
	case accepted:
		for _, c := range []string{"date_ok", "amount_ok", "category_ok"} {
			if vals[at[c]] != int64(1) {
				return fmt.Sprintf("accepted = 1 with %s = %s", c, asText(vals[at[c]]))
			}
		}
	}
	return ""
}

func asText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case nil:
		return "NULL"
	}
	return fmt.Sprint(v)
}

// appendValue appends v's canonical form (its tag, then its bytes).
func appendValue(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(buf, tagNull), nil
	case int64:
		return binary.BigEndian.AppendUint64(append(buf, tagInt), uint64(v)), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(buf, tagReal), math.Float64bits(v)), nil
	case string:
		return append(binary.AppendUvarint(append(buf, tagText), uint64(len(v))), v...), nil
	case []byte:
		return append(binary.AppendUvarint(append(buf, tagText), uint64(len(v))), v...), nil
	}
	return nil, fmt.Errorf("digest: a value of type %T", v)
}

// SealRun writes the digest of every pass of run runID that has a passes
// row, over every requests column and every request_fields column, in
// place of any it had: what its rows are as the run ends. Records added
// before it are committed first.
func (s *Store) SealRun(ctx context.Context, runID string) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		cols, err := tableColumns(ctx, tx, "main", "requests")
		if err != nil {
			return fmt.Errorf("seal run %s: %w", runID, err)
		}
		fieldCols, err := tableColumns(ctx, tx, "main", "request_fields")
		if err != nil {
			return fmt.Errorf("seal run %s: %w", runID, err)
		}
		keys, err := passKeys(ctx, tx, runID)
		if err != nil {
			return fmt.Errorf("seal run %s: %w", runID, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM digests WHERE run_id = ?`, runID); err != nil {
			return fmt.Errorf("seal run %s: %w", runID, err)
		}
		for _, key := range keys {
			a, err := auditPass(ctx, tx, key, cols, nil, 0)
			if err != nil {
				return fmt.Errorf("seal run %s: %w", runID, err)
			}
			fa, err := auditFields(ctx, tx, key, fieldCols)
			if err != nil {
				return fmt.Errorf("seal run %s: %w", runID, err)
			}
			d := Digest{Key: key, Rows: a.Rows, SHA256: a.SHA256, Columns: cols, FieldRows: fa.Rows, FieldSHA256: fa.SHA256, FieldColumns: fieldCols}
			if _, err := tx.ExecContext(ctx, digestColumns.insertSQL("digests", 1, ""), digestColumns.values(nil, &d)...); err != nil {
				return fmt.Errorf("seal run %s: pass %s: %w", runID, key, err)
			}
		}
		return nil
	})
}

// passKeys are the keys of run runID's passes rows.
func passKeys(ctx context.Context, q querier, runID string) ([]extractbench.PassKey, error) {
	rows, err := q.QueryContext(ctx, `SELECT variant, mode, level, repetition FROM passes WHERE run_id = ?
		ORDER BY variant, mode, level, repetition`, runID)
	if err != nil {
		return nil, fmt.Errorf("read the passes: %w", err)
	}
	defer rows.Close()
	var keys []extractbench.PassKey
	for rows.Next() {
		k := extractbench.PassKey{RunID: runID}
		if err := rows.Scan(&k.Variant, &k.Mode, &k.Level, &k.Repetition); err != nil {
			return nil, fmt.Errorf("read the passes: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// Digests returns the digests run runID recorded when it last ended, by
// pass; none for a run that has not ended since it was created or resumed,
// or that was written before schema version 7, or that is not a shard's.
func (r *reader) Digests(ctx context.Context, runID string) (map[extractbench.PassKey]Digest, error) {
	ds, err := selectRows(ctx, r.rdb, digestColumns, `digests WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("read the digests of run %s: %w", runID, err)
	}
	out := make(map[extractbench.PassKey]Digest, len(ds))
	for _, d := range ds {
		out[d.Key] = d
	}
	return out, nil
}

// PassDocsDiff compares the documents of pass key with those of the other
// passes of its run, up to limit of each: missing have a measured row in
// another pass and none in this one (rows a pass lost), lone have one here
// and in no other pass (rows a pass gained, or ids edited). Only a pass
// over the whole of its run's documents can be told so: a context pass
// holds one length class by design; do not ask for one.
func (r *reader) PassDocsDiff(ctx context.Context, key extractbench.PassKey, limit int) (missing, lone []string, err error) {
	pass := `SELECT doc_id FROM requests WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ? AND ` + measured
	others := `SELECT doc_id FROM requests WHERE run_id = ? AND NOT (variant = ? AND mode = ? AND level = ? AND repetition = ?) AND ` + measured
	args := []any{key.RunID, key.Variant, key.Mode, key.Level, key.Repetition}
	if missing, err = r.docIDs(ctx, others+` EXCEPT `+pass+` ORDER BY doc_id LIMIT ?`, append(append(slices.Clone(args), args...), limit)...); err != nil {
		return nil, nil, fmt.Errorf("documents of pass %s: %w", key, err)
	}
	if lone, err = r.docIDs(ctx, pass+` EXCEPT `+others+` ORDER BY doc_id LIMIT ?`, append(append(slices.Clone(args), args...), limit)...); err != nil {
		return nil, nil, fmt.Errorf("documents of pass %s: %w", key, err)
	}
	return missing, lone, nil
}

func (r *reader) docIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := r.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// digestsSince is the schema version (migration 7) from which a shard's
// run records its digests as it ends.
const digestsSince = 7

// RecordsDigests reports whether the database was written by an
// extractbench whose shard runs record their digests as they end: an
// ended shard run of it without digests had them removed.
func (rd *Reader) RecordsDigests() bool { return rd.version >= digestsSince }
