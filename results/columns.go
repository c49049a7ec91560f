package results

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// colKind is what a column holds: its SQL type in the table and its Arrow
// (and so Parquet) type in the export.
type colKind int

const (
	integer colKind = iota // INTEGER; int64
	real                   // REAL; float64
	text                   // TEXT; utf8
	flag                   // INTEGER 0/1 with a CHECK; boolean
)

// sqlType is the type the table declares for a column of kind k.
func (k colKind) sqlType() string {
	return [...]string{integer: "INTEGER", real: "REAL", text: "TEXT", flag: "INTEGER"}[k]
}

// field is the Arrow field of a column of kind k.
func (k colKind) field(name string, nullable bool) arrow.Field {
	switch k {
	case integer:
		return i64(name, nullable)
	case real:
		return f64(name, nullable)
	case flag:
		return boolean(name, nullable)
	}
	return utf8(name, nullable)
}

// column is one column of a SQL table whose rows are Go values of type T:
// the one place a column is named, typed and mapped to its field. The
// table's INSERT, its scans, its Parquet schema and the test against the
// migrated table (TestColumnTables_MatchTables) all derive from a list of
// these, so a column added to the list and to a migration is written, read
// and exported alike.
type column[T any] struct {
	name     string
	kind     colKind
	nullable bool
	// repeats marks a text column with few distinct values (labels, ids of
	// a pass): the export dictionary-encodes it, and plain-encodes the
	// others, whose dictionaries would only be hashed and thrown away.
	repeats bool
	// value is the value the row writes, as the driver binds it: int64,
	// float64, bool, string, or nil for NULL.
	value func(*T) any
	// load sets the field from a stored value; nil for a column derived
	// from others (the latencies), which readers recompute.
	load func(*T, *cell)
}

// cell is one stored value as a scan reads it. It implements sql.Scanner
// without database/sql's conversions: the driver's int64, float64 or
// string is kept as it comes.
type cell struct {
	i     int64
	f     float64
	s     string
	valid bool
}

// Scan implements sql.Scanner.
func (c *cell) Scan(src any) error {
	*c = cell{valid: src != nil}
	switch v := src.(type) {
	case nil:
	case int64:
		c.i, c.f = v, float64(v)
	case float64:
		c.f = v
	case string:
		c.s = v
	case []byte:
		c.s = string(v)
	case bool:
		if v {
			c.i = 1
		}
	default:
		return fmt.Errorf("unexpected stored value %T", src)
	}
	return nil
}

// int is the cell as an int, 0 for NULL.
func (c *cell) int() int { return int(c.i) }

// intPtr is the cell as a new *int, nil for NULL.
func (c *cell) intPtr() *int {
	if !c.valid {
		return nil
	}
	n := int(c.i)
	return &n
}

// strPtr is the cell as a new *string, nil for NULL.
func (c *cell) strPtr() *string {
	if !c.valid {
		return nil
	}
	s := c.s
	return &s
}

// boolPtr is the cell as a new *bool, nil for NULL.
func (c *cell) boolPtr() *bool {
	if !c.valid {
		return nil
	}
	b := c.i != 0
	return &b
}

// int64Ptr is the cell as a new *int64, nil for NULL.
func (c *cell) int64Ptr() *int64 {
	if !c.valid {
		return nil
	}
	n := c.i
	return &n
}

// floatPtr is the cell as a new *float64, nil for NULL.
func (c *cell) floatPtr() *float64 {
	if !c.valid {
		return nil
	}
	f := c.f
	return &f
}

// The constructors below make the column of a row's field from a pointer
// to it, for a table whose Go fields say their NULL rule (Pass: a pointer
// is nullable, as is a text the table stores "" as NULL): the kind and the
// NULL rule are the constructor's name, so a column is one line.

// intField is an INTEGER NOT NULL column.
func intField[T any, I ~int | ~int64](name string, field func(*T) *I) column[T] {
	return column[T]{name: name, kind: integer,
		value: func(t *T) any { return int64(*field(t)) },
		load:  func(t *T, c *cell) { *field(t) = I(c.i) }}
}

// textField is a TEXT NOT NULL column.
func textField[T any, S ~string](name string, field func(*T) *S) column[T] {
	return column[T]{name: name, kind: text,
		value: func(t *T) any { return string(*field(t)) },
		load:  func(t *T, c *cell) { *field(t) = S(c.s) }}
}

// realField is a REAL NOT NULL column.
func realField[T any](name string, field func(*T) *float64) column[T] {
	return column[T]{name: name, kind: real,
		value: func(t *T) any { return *field(t) },
		load:  func(t *T, c *cell) { *field(t) = c.f }}
}

// repeated is c marked as a column of few distinct values (repeats).
func (c column[T]) repeated() column[T] {
	c.repeats = true
	return c
}

// optText is a TEXT column that stores "" as NULL (and reads NULL as "").
func optText[T any, S ~string](name string, field func(*T) *S) column[T] {
	return column[T]{name: name, kind: text, nullable: true,
		value: func(t *T) any { return nullStr(*field(t)) },
		load:  func(t *T, c *cell) { *field(t) = S(c.s) }}
}

// optInt is an INTEGER column that is NULL for a nil field.
func optInt[T any](name string, field func(*T) **int64) column[T] {
	return column[T]{name: name, kind: integer, nullable: true,
		value: func(t *T) any { return nullPtr(*field(t)) },
		load:  func(t *T, c *cell) { *field(t) = c.int64Ptr() }}
}

// optReal is a REAL column that is NULL for a nil field.
func optReal[T any](name string, field func(*T) **float64) column[T] {
	return column[T]{name: name, kind: real, nullable: true,
		value: func(t *T) any { return nullPtr(*field(t)) },
		load:  func(t *T, c *cell) { *field(t) = c.floatPtr() }}
}

// optFlag is an INTEGER 0/1 column that is NULL for a nil field.
func optFlag[T any](name string, field func(*T) **bool) column[T] {
	return column[T]{name: name, kind: flag, nullable: true,
		value: func(t *T) any { return nullPtr(*field(t)) },
		load:  func(t *T, c *cell) { *field(t) = c.boolPtr() }}
}

// columns is the column list of one table.
type columns[T any] []column[T]

func (cs columns[T]) names() []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	return names
}

// schema is the Arrow schema of the table's Parquet file, one field per
// column in table order.
func (cs columns[T]) schema() *arrow.Schema {
	fields := make([]arrow.Field, len(cs))
	for i, c := range cs {
		fields[i] = c.kind.field(c.name, c.nullable)
	}
	return arrow.NewSchema(fields, nil)
}

// dictionary lists the columns the export dictionary-encodes.
func (cs columns[T]) dictionary() map[string]bool {
	d := map[string]bool{}
	for _, c := range cs {
		if c.repeats {
			d[c.name] = true
		}
	}
	return d
}

// values appends row's values in column order to vals.
func (cs columns[T]) values(vals []any, row *T) []any {
	for _, c := range cs {
		vals = append(vals, c.value(row))
	}
	return vals
}

// loaded are the columns a scan reads back, in order.
func (cs columns[T]) loaded() columns[T] {
	var out columns[T]
	for _, c := range cs {
		if c.load != nil {
			out = append(out, c)
		}
	}
	return out
}

// updateSet is an ON CONFLICT DO UPDATE's SET list: every column after the
// first key ones (the conflict's key, which stays) from the excluded row.
func (cs columns[T]) updateSet(key int) string {
	set := make([]string, 0, len(cs))
	for _, c := range cs.names()[key:] {
		set = append(set, c+" = excluded."+c)
	}
	return strings.Join(set, ", ")
}

// insertSQL is an INSERT of rows rows of every column, each row's values
// in column order, followed by tail (an ON CONFLICT clause, or "").
func (cs columns[T]) insertSQL(table string, rows int, tail string) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cs)), ", ") + ")"
	return `INSERT INTO ` + table + ` (` + strings.Join(cs.names(), ", ") + `) VALUES ` +
		strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ") + tail
}

// scanner reads rows selected with the loaded columns' names into one
// value of T.
type scanner[T any] struct {
	cols  columns[T]
	cells []cell
	dest  []any
	// exprs select a column by an SQL expression of the row instead of by
	// its name (a text read only where the reader needs it); nil for none.
	exprs map[string]string
}

func newScanner[T any](cs columns[T]) *scanner[T] {
	sc := &scanner[T]{cols: cs.loaded()}
	sc.cells = make([]cell, len(sc.cols))
	sc.dest = make([]any, len(sc.cols))
	for i := range sc.cells {
		sc.dest[i] = &sc.cells[i]
	}
	return sc
}

// selectList is the loaded columns' names (or their exprs),
// comma-separated.
func (sc *scanner[T]) selectList() string {
	names := sc.cols.names()
	for i, n := range names {
		if e, ok := sc.exprs[n]; ok {
			names[i] = e
		}
	}
	return strings.Join(names, ", ")
}

// scan reads the current row of rows into a zero T.
func (sc *scanner[T]) scan(rows interface{ Scan(...any) error }) (T, error) {
	var v T
	if err := rows.Scan(sc.dest...); err != nil {
		return v, err
	}
	for i, c := range sc.cols {
		c.load(&v, &sc.cells[i])
	}
	return v, nil
}

// selectRows reads the rows of from (a table name, then its WHERE and
// ORDER BY clauses with ? placeholders for args) as values of T, the
// loaded columns of cs selected.
func selectRows[T any](ctx context.Context, q querier, cs columns[T], from string, args ...any) ([]T, error) {
	sc := newScanner(cs)
	rows, err := q.QueryContext(ctx, `SELECT `+sc.selectList()+` FROM `+from, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := sc.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
