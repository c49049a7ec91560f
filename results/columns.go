package results

import (
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

// selectList is the loaded columns' names, comma-separated.
func (sc *scanner[T]) selectList() string { return strings.Join(sc.cols.names(), ", ") }

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
